"""The command lines of the product tools (tools/), as runx runs them or tells users to run them,
under Debian's torch 1.13 without CUDA: what works there (a python model's TorchScript file,
--print-parameters) works and writes what runx reads; what needs PyTorch 2.6+ and CUDA (a package)
is refused with exit status 2 and one line saying why, with every option runx passes accepted.
The arguments are those runx forms (runner/src/spec/python_model.cc TorchScriptCommand,
spec/compiled_package.cc CompileCommand; their unit tests pin the same lines).

  /usr/bin/python3 -m unittest discover -s tests/tools -p '*_test.py'     (ctest: Tools.CommandLines)
"""
import hashlib, json, os, re, subprocess, sys, tempfile, unittest
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TOOLS = os.path.join(ROOT, "tools")
RELEASE = tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", torch.__version__).groups())

MODEL_PY = """from typing import Tuple
import torch
from torch import nn

def build(num_classes=10):
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 16), nn.ReLU(), nn.Linear(16, num_classes))

class Unusable(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(192, 10)
    def forward(self, x):
        twice = lambda t: t * 2
        return {'logits': twice(self.fc(x.flatten(1)))}.keys()

def unusable(num_classes=10):
    return Unusable()

class TupleWhenScripted(nn.Module):
    # Like torchvision's GoogLeNet: scripted, forward returns a tuple; eager, the logits.
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(192, 10)
    @torch.jit.unused
    def eager_outputs(self, x: torch.Tensor, aux: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return x  # type: ignore[return-value]
    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        y = self.fc(x.flatten(1))
        if torch.jit.is_scripting():
            return (y, y)
        return self.eager_outputs(y, y)

def tuple_when_scripted(num_classes=10):
    return TupleWhenScripted()
"""


class Tool(unittest.TestCase):
    script = None

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.model = os.path.join(self.dir.name, "model.py")
        with open(self.model, "w") as f:
            f.write(MODEL_PY)

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def run_tool(self, *args):
        """The tool as runx runs it: `python3 tools/SCRIPT ARGS`, from another working directory, with
        no CUDA device visible (so that a GPU machine tests the same refusals)."""
        return subprocess.run([sys.executable, os.path.join(TOOLS, self.script), *args], capture_output=True,
                              text=True, cwd=self.dir.name, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})

    def assertRefused(self, r, prefix, says):
        """Exit status 2, one line on stderr naming the tool and the reason; no traceback, no usage error."""
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertTrue(r.stderr.startswith(prefix + ": error: torch " + torch.__version__), r.stderr)
        self.assertIn(says, r.stderr)
        self.assertNotIn("Traceback", r.stderr)


class CompileStep(Tool):
    script = "compile_step.py"

    def test_torchscript_of_a_python_model_writes_the_file_and_the_sidecar_runx_reads(self):
        out = self.path("model-build.ts.pt")
        r = self.run_tool("--module", self.model + ":build", "--builder-kwargs", '{"num_classes":10}',
                          "--shape", "3,8,8", "--torchscript", out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout, f"compile_step.py: {self.model}:build as TorchScript (script) -> {out}\n")
        with open(out + ".json") as f:
            fields = json.load(f)
        with open(self.model, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        self.assertEqual(fields, {"format": "runx-torchscript/1", "torch": torch.__version__, "source": self.model,
                                  "source_sha256": sha, "builder": "build", "kwargs": {"num_classes": 10},
                                  "shape": [3, 8, 8], "seed": 0, "method": "script"})
        module = torch.jit.load(out)
        self.assertEqual(tuple(module(torch.randn(2, 3, 8, 8)).shape), (2, 10))
        self.assertTrue(module.training)

    def test_torchscript_of_a_builder_neither_scripted_nor_traced_exits_2_with_both_reasons(self):
        out = self.path("unusable.ts.pt")
        r = self.run_tool("--module", self.model + ":unusable", "--shape", "3,8,8", "--torchscript", out)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertTrue(r.stderr.startswith("torch.jit.script: "), r.stderr)
        self.assertIn("; torch.jit.trace: RuntimeError: Tracer cannot infer type of dict_keys", r.stderr)
        self.assertFalse(os.path.exists(out) or os.path.exists(out + ".json"))

    def test_torchscript_of_a_model_whose_scripted_forward_returns_a_tuple_is_traced_with_the_reason(self):
        out = self.path("tuple.ts.pt")
        r = self.run_tool("--module", self.model + ":tuple_when_scripted", "--shape", "3,8,8", "--torchscript", out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("as TorchScript (trace)", r.stdout)
        with open(out + ".json") as f:
            fields = json.load(f)
        self.assertEqual(fields["method"], "trace")
        self.assertIn("the scripted forward returns Tuple[Tensor, Tensor], not the logits tensor runx trains",
                      fields["script_error"])
        y = torch.jit.load(out)(torch.randn(2, 3, 8, 8))
        self.assertIsInstance(y, torch.Tensor)
        self.assertEqual(tuple(y.shape), (2, 10))

    def test_torchscript_needs_a_module(self):
        r = self.run_tool("--model", "resnet18", "--torchscript", self.path("x.ts.pt"))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("error: --torchscript needs --module FILE.py:FN", r.stderr)

    def test_print_parameters_of_gpt_is_the_file_runx_s_unit_test_holds_runx_s_gpt_to(self):
        # tests/unit/compiled_step_test.cc (RunxsGptHasTheTensorsOfThePeerDefinitionCompileStepBuilds)
        r = self.run_tool("--model", "gpt", "--n-layer", "2", "--n-head", "2", "--d-model", "32", "--seq-len", "16",
                          "--block-size", "24", "--print-parameters")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(ROOT, "tests", "data", "compiled_step", "gpt-parameters.json")) as f:
            self.assertEqual(json.loads(r.stdout), json.load(f))

    def test_print_parameters_of_a_python_model(self):
        r = self.run_tool("--module", self.model + ":build", "--builder-kwargs", '{"num_classes":10}',
                          "--shape", "3,8,8", "--print-parameters")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(json.loads(r.stdout), {"model": self.model + ":build", "shape": [3, 8, 8],
                                                "parameters": {"1.weight": [16, 192], "1.bias": [16],
                                                               "3.weight": [10, 16], "3.bias": [10]},
                                                "buffers": {}})

    def test_a_package_is_refused_without_pytorch_2_6_and_cuda_whatever_model_runx_asks_for(self):
        says = ("cannot make a package: the joint graph (aot_export_module) and AOTInductor's packaging need "
                "PyTorch 2.6 or later" if RELEASE < (2, 6) else "sees no CUDA device")
        out = self.path("step.pt2")
        for args in (  # runx's own ResNet, gpt over byte tokens, a python model (CompileCommand)
                ["--model", "resnet18", "--batch", "4", "--image-size", "16", "--num-classes", "10", "--dtype", "fp32"],
                ["--model", "gpt", "--n-layer", "2", "--n-head", "2", "--d-model", "32", "--seq-len", "16",
                 "--block-size", "24", "--vocab", "256", "--batch", "4", "--dtype", "bf16"],
                ["--module", self.model + ":build", "--builder-kwargs", '{"num_classes":10}', "--shape", "3,8,8",
                 "--num-classes", "10", "--batch", "4", "--dtype", "bf16", "--channels-last"]):
            with self.subTest(args=args):
                r = self.run_tool(*args, "--measure", "0", "-o", out)
                self.assertRefused(r, "compile_step.py", says)
                self.assertEqual(os.listdir(self.dir.name), ["model.py"])
        # The measurements alone (bench/gpu-checks.sh's peer runs) need the same.
        r = self.run_tool("--model", "resnet50", "--batch", "8", "--no-check", "--measure", "2", "--configs", "eager")
        self.assertRefused(r, "compile_step.py", says)


class AotiPackage(Tool):
    script = "aoti_package.py"

    def test_a_package_is_refused_without_pytorch_2_6_or_without_cuda_for_cuda(self):
        if RELEASE < (2, 6):
            says, devices = "cannot make a package runx loads: torch.export and AOTInductor's packaging need " \
                            "PyTorch 2.6 or later", ("cuda", "cpu")
        else:  # torch 2.6+ makes a package for the CPU: not tried here (minutes)
            says, devices = "sees no CUDA device for --device cuda", ("cuda",)
        out = self.path("net.pt2")
        for device in devices:
            for args in (["--model", "resnet18", "--shape", "3,32,32", "--num-classes", "10", "--batch", "4"],
                         ["--module", self.model + ":build", "--shape", "3,8,8", "--batch", "4", "--dtype", "bf16",
                          "--channels-last"]):
                with self.subTest(device=device, args=args):
                    r = self.run_tool(*args, "--device", device, "-o", out)
                    self.assertRefused(r, "aoti_package.py", says.replace("--device cuda", "--device " + device))
                    self.assertEqual(os.listdir(self.dir.name), ["model.py"])


if __name__ == "__main__":
    unittest.main()
