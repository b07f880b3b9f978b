"""The verdicts that decide issue 13's correctness, tested on the CPU under Debian's torch 1.13:
bench/studies/compare_weights.py (the weights after N steps, against the update and against a floor) and
tools/compile_step.py's pre-package check (a joint graph against eager, read against a floor).
The GPU runs them on real packages (bench/compiled-correctness.sh); here they meet weights and
steps whose difference is known, so a verdict that passes everything, or fails everything, shows.

  /usr/bin/python3 -m unittest discover -s tests/bench -p '*_test.py'     (ctest: Bench.Verdicts)
"""
import contextlib, copy, importlib.util, io, os, subprocess, sys, tempfile, types, unittest
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
STUDIES, TOOLS = os.path.join(ROOT, "bench", "studies"), os.path.join(ROOT, "tools")

def load(folder, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(folder, name + ".py"))
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod

class Net(torch.nn.Module):
    """conv, BatchNorm, ReLU, pool, linear: the kinds of tensors (and a BatchNorm buffer) of a ResNet."""
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)
    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).mean((2, 3)))

class CompareWeights(unittest.TestCase):
    """compare_weights.py A B --initial W0 [--floor A2]: exit 0 ok, 1 failed."""
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        torch.manual_seed(0)
        self.w0 = Net()
        self.update = {n: 1e-2 * torch.randn_like(p) for n, p in self.w0.named_parameters()}

    def tearDown(self):
        self.dir.cleanup()

    def initial(self):
        path = os.path.join(self.dir.name, "w0.pt")
        torch.jit.save(torch.jit.script(self.w0), path)
        return path

    def weights(self, name, noise=0.0, seed=1):
        """w0 + the update + noise x |the update| (per tensor, random direction), saved as runx's export saves"""
        g = torch.Generator().manual_seed(seed)
        m = copy.deepcopy(self.w0)
        with torch.no_grad():
            for n, p in m.named_parameters():
                u = self.update[n]
                d = torch.randn(p.shape, generator=g)
                p += u + noise * u.norm() * d / d.norm()
        path = os.path.join(self.dir.name, name + ".pt")
        torch.jit.save(torch.jit.script(m), path)
        return path

    def compare(self, *args):
        return subprocess.run([sys.executable, os.path.join(STUDIES, "compare_weights.py"), *args],
                              capture_output=True, text=True)

    def verdict(self, *args):
        r = self.compare(*args)
        self.assertIn(r.returncode, (0, 1), r.stdout + r.stderr)
        return r.returncode == 0, r.stdout

    def test_against_the_update_the_bound_tells_a_small_difference_from_a_large_one(self):
        w0, a = self.initial(), self.weights("a")
        near, far = self.weights("near", noise=0.05, seed=2), self.weights("far", noise=0.5, seed=3)
        ok, out = self.verdict(a, near, "--initial", w0, "--update-tolerance", "0.1")
        self.assertTrue(ok, out)
        ok, out = self.verdict(a, far, "--initial", w0, "--update-tolerance", "0.1")
        self.assertFalse(ok, out)
        self.assertIn("against the update", out)

    def test_a_floor_scales_the_bound_by_one_and_a_half(self):
        w0, a = self.initial(), self.weights("a")
        a2 = self.weights("a2", noise=0.2, seed=4)  # A's own run-to-run difference: about 0.2 of the update
        within, beyond = self.weights("within", noise=0.25, seed=5), self.weights("beyond", noise=0.45, seed=6)
        floor = ["--initial", w0, "--floor", a2, "--update-tolerance", "0", "--tolerance", "0"]
        ok, out = self.verdict(a, within, *floor)
        self.assertTrue(ok, out)
        self.assertIn("1.5 x the floor", out)
        ok, out = self.verdict(a, beyond, *floor)
        self.assertFalse(ok, out)

    def test_a_file_that_is_not_weights_is_an_error_not_a_failed_verdict(self):
        a, text = self.weights("a"), os.path.join(self.dir.name, "notes.txt")
        with open(text, "w") as f: f.write("eager: 7.04\n")
        for other, says in ((text, "not a weights.pt written by runx's export"), (text + ".missing", "no such file")):
            r = self.compare(a, other)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn(f"compare_weights.py: error: {other}: {says}", r.stderr)
            self.assertNotIn("Traceback", r.stderr)

class PrePackageCheck(unittest.TestCase):
    """compile_step.check: a joint step is run for 3 SGD steps beside eager and a floor; a step that
    computes the gradients right passes, one off by a scale fails, whatever the floor."""
    def setUp(self):
        self.cs = load(TOOLS, "compile_step")
        torch.manual_seed(0)
        self.init = Net().to(memory_format=torch.channels_last)
        self.x = torch.randn(8, 3, 6, 6).contiguous(memory_format=torch.channels_last)
        self.y = torch.randint(0, 5, (8,))
        step = self.cs.Step(self.init, None)
        params = [n for n, _ in step.named_parameters()]
        buffers = [n for n, t in step.named_buffers() if t.is_floating_point()]
        self.inputs = ([{"kind": "parameter", "fqn": n} for n in params] +
                       [{"kind": "buffer", "fqn": n} for n in buffers] +
                       [{"kind": "input", "fqn": "input"}, {"kind": "target", "fqn": "target"}])
        self.outputs = ([{"kind": "buffer_update", "fqn": n} for n in buffers] + [{"kind": "loss", "fqn": "loss"}] +
                        [{"kind": "gradient", "fqn": n} for n in params])

    def joint(self, grad_scale=1.0):
        """A stand-in for aot_export_module's joint graph: (params, buffers, x, y) -> (new buffers,
        loss, gradients), computed eagerly on a twin of the model (scaled gradients: a wrong step)."""
        twin = self.cs.Step(copy.deepcopy(self.init), None)
        names = [i["fqn"] for i in self.inputs if i["kind"] in ("parameter", "buffer")]
        state = {**dict(twin.named_parameters()), **dict(twin.named_buffers())}
        def fn(*args):
            *tensors, x, y = args
            with torch.no_grad():
                for n, t in zip(names, tensors): state[n].copy_(t)
            with torch.enable_grad():
                twin.zero_grad(set_to_none=True)
                loss, = twin(x, y)
                loss.backward()
            bufs = [state[o["fqn"]].clone() for o in self.outputs if o["kind"] == "buffer_update"]
            grads = [grad_scale * state[o["fqn"]].grad for o in self.outputs if o["kind"] == "gradient"]
            return [*bufs, loss.detach(), *grads]
        return fn

    def check(self, joint):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ok = self.cs.check(types.SimpleNamespace(check_steps=3), self.init, None, joint, self.inputs,
                               self.outputs, self.x, self.y)
        return ok, out.getvalue()

    def test_a_joint_step_that_computes_eager_s_gradients_passes(self):
        ok, out = self.check(self.joint())
        self.assertTrue(ok, out)
        self.assertIn("floor, eager, other memory format", out)

    def test_a_joint_step_with_gradients_off_by_a_fifth_fails_on_the_weights(self):
        ok, out = self.check(self.joint(grad_scale=1.2))
        self.assertFalse(ok, out)
        self.assertIn("FAILED", out)

    def test_the_floor_of_a_token_model_reverses_the_batch(self):
        tokens, targets = torch.arange(12).view(3, 4), torch.arange(12).view(3, 4) + 1
        name, _, x, y = self.cs.floor_run(torch.nn.Linear(2, 2), tokens, targets)
        self.assertEqual(name, "eager, batch rows reversed")
        self.assertTrue(torch.equal(x[0], tokens[2]) and torch.equal(y[0], targets[2]))

if __name__ == "__main__":
    unittest.main()
