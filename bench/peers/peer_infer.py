"""Peer measurement for runx's task: infer, on the GPU machine: PyTorch (Python) inference latency
for the same work, so that runx can be compared side by side in ONE call.

python3 bench/peers/peer_infer.py --model resnet50 --batch 1 --steps 200 --warmup 20 \
    --configs fp32,bf16,bf16+cl,bf16+cl+graph,bf16+cl+compile
python3 bench/peers/peer_infer.py --model mlp --batch 1 --configs fp32,fp32+graph
Each pass is synchronized (one request's latency), as runx's task: infer does. Prints one JSON line
per config: {"config", "batch", "ms_median", "ms_p90", "ms_p99", "samples_per_s"}.
Configs: fp32 | bf16 | +cl (channels_last) | +graph (torch.cuda.CUDAGraph of the forward pass) |
+compile (torch.compile mode="reduce-overhead", which uses CUDA graphs itself).
"""
import argparse, json, time, torch

def model_for(name):
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(), (3, 224, 224)
    # runx's mlp: Flatten, then Linear+ReLU per hidden width, then the output layer
    layers, width = [torch.nn.Flatten()], 512
    for h in (512, 512, 512):
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 10)), (512,)

def run(name, cfg, batch, steps, warmup):
    torch.manual_seed(0)
    parts = cfg.split("+")
    prec, cl, graph, comp = parts[0], "cl" in parts, "graph" in parts, "compile" in parts
    torch.backends.cudnn.benchmark = True
    m, shape = model_for(name)
    m = m.cuda().eval()
    fmt = torch.channels_last if cl else torch.contiguous_format
    if cl: m = m.to(memory_format=fmt)
    x = torch.randn(batch, *shape, device="cuda")
    if cl: x = x.contiguous(memory_format=fmt)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec)
    def fwd(inp):
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None, cache_enabled=not graph):
            return m(inp)
    f = torch.compile(fwd, mode="reduce-overhead") if comp else fwd
    with torch.inference_mode():
        if graph:
            static = x.clone()
            s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3): fwd(static)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                out = fwd(static)
            def f(inp):
                static.copy_(inp, non_blocking=True); g.replay(); return out.clone()
        t0 = time.time()
        for _ in range(warmup): f(x)
        torch.cuda.synchronize(); warm_s = time.time() - t0
        ms = []
        for _ in range(steps):
            t = time.perf_counter(); f(x); torch.cuda.synchronize(); ms.append((time.perf_counter() - t) * 1000)
    ms.sort()
    q = lambda p: ms[min(len(ms) - 1, int(p * (len(ms) - 1) + 0.5))]
    return {"peer": "pytorch-" + torch.__version__, "model": name, "config": cfg, "batch": batch,
            "ms_median": round(q(0.5), 4), "ms_p90": round(q(0.9), 4), "ms_p99": round(q(0.99), 4),
            "samples_per_s": round(batch * 1000 * len(ms) / sum(ms), 1), "warmup_s": round(warm_s, 1)}

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50", choices=["resnet50", "mlp"])
    ap.add_argument("--batch", type=int, default=1); ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--configs", default="fp32,bf16,bf16+cl,bf16+cl+graph,bf16+cl+compile")
    a = ap.parse_args()
    for cfg in a.configs.split(","):
        print(json.dumps(run(a.model, cfg, a.batch, a.steps, a.warmup)), flush=True)
