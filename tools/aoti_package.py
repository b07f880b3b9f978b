"""Makes an AOTInductor package (.pt2) for runx's `model: {name: aoti, path: FILE.pt2}`: the one
Python step of running an exported model (docs/dsl.md, "Models from files").

  python3 tools/aoti_package.py --model resnet50 --batch 64 -o resnet50-b64.pt2
  python3 tools/aoti_package.py --model vit_b_16 --batch 64 --dtype bf16 -o vit-bf16.pt2
  python3 tools/aoti_package.py --module my_net.py:build --shape 3,32,32 --batch 128 -o net.pt2

The package maps float32 inputs [batch, *shape] to float32 logits [batch, num_classes], whatever it
computes in: --dtype casts the weights and the input inside the graph, --channels-last converts
them to channels_last, so runx feeds it the same batches as any model. Precision and memory format
are compiled in: runx's amp and channels_last are `incompatible` with a package. The batch size is
fixed (the fastest kernels) unless --dynamic-batch (one package for batches 1..--max-batch).
The package must be built by the same PyTorch version as the LibTorch runx runs on, for the
device it will run on (--device). Writes FILE.pt2 and FILE.pt2.json (what was compiled).

--module FILE.py:FN: FN() returns the torch.nn.Module (e.g. with its trained weights loaded);
--shape gives the sample shape. Built-in names: torchvision's resnet50, resnet18, vit_b_16,
convnext_tiny, mobilenet_v3_large (random weights, eval mode).

Exit status 2 with one line on stderr, before anything is built, where no package runx loads can be
made: torch before 2.6 (runx's aoti model needs LibTorch 2.6+, and the same release), or --device
cuda without a CUDA device (tests/tools/command_line_test.py).
"""
import argparse, importlib.util, json, os, re, sys, time
import torch

def refusal(device):
    """Why no package can be made here for `device`, or None."""
    release = tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", torch.__version__).groups())
    if release < (2, 6):
        return (f"torch {torch.__version__} cannot make a package runx loads: torch.export and AOTInductor's "
                "packaging need PyTorch 2.6 or later, the release of runx's LibTorch")
    if device.startswith("cuda") and not torch.cuda.is_available():
        return f"torch {torch.__version__} sees no CUDA device for --device {device} (--device cpu packages for the CPU)"
    return None

def build_module(a):
    if a.module:
        path, _, fn = a.module.partition(":")
        spec = importlib.util.spec_from_file_location("user_model", path)
        mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
        return getattr(mod, fn or "build")(), tuple(int(d) for d in a.shape.split(","))
    import torchvision
    torch.manual_seed(a.seed)
    return getattr(torchvision.models, a.model)(num_classes=a.num_classes), tuple(int(d) for d in a.shape.split(","))

class Packaged(torch.nn.Module):
    """float32 [batch, *shape] in, float32 logits out; dtype and memory format inside."""
    def __init__(self, net, dtype, channels_last):
        super().__init__()
        self.net, self.dtype, self.channels_last = net, dtype, channels_last
    def forward(self, x):
        x = x.to(self.dtype)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return self.net(x).float()

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--module", help="FILE.py:FN returning the nn.Module to package")
    ap.add_argument("--shape", default="3,224,224", help="sample shape, e.g. 3,224,224")
    ap.add_argument("--num-classes", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--dynamic-batch", action="store_true")
    ap.add_argument("--max-batch", type=int, default=1024)
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "bf16", "fp16"])
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    why = refusal(a.device)
    if why:
        print(f"aoti_package.py: error: {why}", file=sys.stderr)
        return 2
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype]
    net, shape = build_module(a)
    net = net.eval().to(a.device, dtype)
    if a.channels_last:
        net = net.to(memory_format=torch.channels_last)
    model = Packaged(net, dtype, a.channels_last).eval()
    x = torch.randn(a.batch, *shape, device=a.device)
    dynamic = {"x": {0: torch.export.Dim("batch", min=1, max=a.max_batch)}} if a.dynamic_batch else None
    t0 = time.time()
    with torch.inference_mode():
        ep = torch.export.export(model, (x,), dynamic_shapes=dynamic)
    t1 = time.time()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=a.output)
    t2 = time.time()
    with torch.inference_mode():
        y = model(x)
    info = {"file": os.path.basename(path), "model": a.module or a.model, "shape": list(shape),
            "num_classes": int(y.shape[1]), "batch": "dynamic" if a.dynamic_batch else a.batch,
            "dtype": a.dtype, "channels_last": a.channels_last, "device": a.device,
            "torch": torch.__version__, "export_s": round(t1 - t0, 1), "compile_s": round(t2 - t1, 1),
            "bytes": os.path.getsize(path)}
    with open(path + ".json", "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info), flush=True)

if __name__ == "__main__":
    sys.exit(main())
