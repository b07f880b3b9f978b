"""Peer measurement on the GPU machine: PyTorch (Python) training throughput for the same work runx
does, so that runx can be compared side by side in ONE run (figures differ between machines/runs).

python3 bench/peers/peer_resnet50.py --batch 256 --steps 40 --warmup 15 --configs fp32,bf16,bf16+cl,bf16+cl+compile
Prints one JSON line per config: {"config":..., "batch":..., "ms_per_step":..., "samples_per_s":..., "peak_mem_gib":...}
With --energy also "joules_per_sample" and "power_w" over the measured steps, by runx's rule
(bench/peers/nvml_energy.py: NVML's counter polled through the steps).
Configs: fp32 | tf32 | bf16 | fp16 | +cl (channels_last) | +compile (torch.compile default mode)
"""
import argparse, json, time, torch, torchvision

def run(cfg, batch, steps, warmup, size, energy=False):
    torch.manual_seed(0)
    parts = cfg.split("+")
    prec, cl, comp = parts[0], "cl" in parts, "compile" in parts
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"  # cuDNN convs keep PyTorch's default (TF32 on)
    m = torchvision.models.resnet50().cuda()
    fmt = torch.channels_last if cl else torch.contiguous_format
    m = m.to(memory_format=fmt)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(batch, 3, size, size, device="cuda").contiguous(memory_format=fmt)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec)
    scaler = torch.amp.GradScaler("cuda", enabled=prec == "fp16")
    def step(x, y):
        with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            loss = torch.nn.functional.cross_entropy(m(x), y)
        scaler.scale(loss).backward(); scaler.step(opt); scaler.update(); opt.zero_grad(set_to_none=True)
        return loss
    f = torch.compile(step) if comp else step
    t0 = time.time()
    for _ in range(warmup): f(x, y)
    torch.cuda.synchronize(); warm_s = time.time() - t0
    torch.cuda.reset_peak_memory_stats()
    meter = None
    if energy:
        import nvml_energy
        meter = nvml_energy.Meter()
        meter.start()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(steps): f(x, y)
    e.record(); torch.cuda.synchronize()
    ms = s.elapsed_time(e) / steps
    extra = {}
    if meter:
        joules, seconds = meter.stop()
        if joules is not None:
            extra = {"joules_per_sample": round(joules / (batch * steps), 5), "power_w": round(joules / seconds, 1)}
    return extra | {"peer": "pytorch-" + torch.__version__, "model": "resnet50", "config": cfg, "batch": batch,
            "image": size, "ms_per_step": round(ms, 3), "samples_per_s": round(batch * 1000 / ms, 1),
            "warmup_s": round(warm_s, 1), "peak_mem_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2)}

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256); ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=15); ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--configs", default="fp32,bf16,bf16+cl,bf16+cl+compile")
    ap.add_argument("--energy", action="store_true", help="joules per sample and watts (NVML)")
    a = ap.parse_args()
    for cfg in a.configs.split(","):
        print(json.dumps(run(cfg, a.batch, a.steps, a.warmup, a.image, a.energy)), flush=True)
