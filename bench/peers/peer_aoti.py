"""PyTorch's figures for runx's `model: {name: aoti}` benchmark (docs/benchmarks.md), on the GPU
machine, in the same call: the SAME module that tools/aoti_package.py packages (weights and input
cast to --dtype inside, --channels-last inside, float32 logits out), run by

  eager       PyTorch eager
  compile     torch.compile(mode="default"): Inductor's kernels, no CUDA graphs
  compile-ro  torch.compile(mode="reduce-overhead"): Inductor's kernels replayed as CUDA graphs
  aoti-py     the .pt2 package (--package) loaded in Python by torch._inductor.aoti_load_package

  python3 bench/peers/peer_aoti.py --model resnet50 --batch 64 --package rn50-b64.pt2 --configs eager,compile,compile-ro,aoti-py

Each pass is synchronized and timed as one request's latency, as runx's task: infer does. One JSON
line per config: {"config", "batch", "ms_median", "ms_p90", "samples_per_s", ...}.
"""
import argparse, json, os, sys, time, torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from aoti_package import Packaged  # noqa: E402

def measure(f, x, steps, warmup):
    t0 = time.time()
    for _ in range(warmup): f(x)
    torch.cuda.synchronize(); warm_s = time.time() - t0
    ms = []
    for _ in range(steps):
        t = time.perf_counter(); f(x); torch.cuda.synchronize(); ms.append((time.perf_counter() - t) * 1000)
    ms.sort()
    q = lambda p: ms[min(len(ms) - 1, int(p * (len(ms) - 1) + 0.5))]
    return {"ms_median": round(q(0.5), 4), "ms_p90": round(q(0.9), 4),
            "samples_per_s": round(x.shape[0] * 1000 * len(ms) / sum(ms), 1), "warmup_s": round(warm_s, 1)}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50"); ap.add_argument("--shape", default="3,224,224")
    ap.add_argument("--num-classes", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=64); ap.add_argument("--dtype", default="fp32")
    ap.add_argument("--channels-last", action="store_true"); ap.add_argument("--package")
    ap.add_argument("--steps", type=int, default=200); ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--configs", default="eager,compile,compile-ro,aoti-py")
    a = ap.parse_args()
    import torchvision
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype]
    net = getattr(torchvision.models, a.model)(num_classes=a.num_classes).eval().cuda().to(dtype)
    if a.channels_last: net = net.to(memory_format=torch.channels_last)
    m = Packaged(net, dtype, a.channels_last).eval()
    x = torch.randn(a.batch, *(int(d) for d in a.shape.split(",")), device="cuda")
    for cfg in a.configs.split(","):
        torch._dynamo.reset()
        if cfg == "eager": f = m
        elif cfg == "compile": f = torch.compile(m, mode="default")
        elif cfg == "compile-ro": f = torch.compile(m, mode="reduce-overhead")
        elif cfg == "aoti-py": f = torch._inductor.aoti_load_package(a.package)
        else: raise SystemExit(f"unknown config {cfg}")
        with torch.inference_mode():
            r = measure(f, x, a.steps, a.warmup)
        print(json.dumps({"peer": "pytorch-" + torch.__version__, "model": a.model, "config": cfg, "batch": a.batch,
                          "dtype": a.dtype, "channels_last": a.channels_last, **r}), flush=True)

if __name__ == "__main__":
    main()
