"""Peer measurement on the GPU machine: PyTorch (Python) training throughput for runx's `gpt` model
on the same text, so that runx can be compared side by side in ONE call.

python3 bench/peers/peer_gpt.py --text /usr/share/games/fortunes --n-layer 8 --n-head 8 --d-model 512 \
    --seq-len 256 --batch 256 --steps 50 --warmup 15 --configs fp32,bf16,bf16+fused,bf16+fused+compile
Prints one JSON line per config:
  {"config":..., "ms_per_step":..., "tokens_per_s":..., "samples_per_s":..., "params":..., "peak_mem_gib":...}
Configs: fp32 | tf32 | bf16 | fp16 (GradScaler) | +fused (AdamW fused=True) | +compile (torch.compile of
the whole step, default mode) | +compile-ro (mode="reduce-overhead": CUDA graphs)

The model is runx's gpt (runner/src/models/gpt.cc) written in PyTorch: tools/gpt_model.py, the
definition tools/compile_step.py compiles too; the loss is cross entropy over every position. The
data is the same byte stream: runx's text source reads a folder's regular text files sorted by
name, skipping binary files and links to files already read; this script does the same, so both
train on identical tokens (random blocks here, shuffled blocks in runx: the order does not change
the speed). runx keeps the text's tokens on the GPU (the text source's default placement), so here
the batches are on the GPU before timing (--data staged, the default); --data step gathers each
step's blocks on the host, pins them and copies them instead.
"""
import argparse, json, os, sys, time
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from gpt_model import Gpt  # noqa: E402


def read_text(path):
    """The bytes runx's text source reads (bytes tokenizer)."""
    if os.path.isfile(path):
        return open(path, "rb").read()
    seen, out = set(), []
    for name in sorted(os.listdir(path)):
        p = os.path.join(path, name)
        if not os.path.isfile(p):
            continue
        real = os.path.realpath(p)
        if real in seen:
            continue
        data = open(p, "rb").read()
        if b"\0" in data[:8192]:
            continue
        seen.add(real); out.append(data)
    return b"".join(out)


def run(cfg, a, tokens):
    torch.manual_seed(0)
    parts = cfg.split("+")
    prec = parts[0]
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
    m = Gpt(256, a.seq_len, a.n_layer, a.n_head, a.d_model).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=a.lr, weight_decay=0.01, fused="fused" in parts)
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec)
    scaler = torch.amp.GradScaler("cuda", enabled=prec == "fp16")
    n_blocks = (tokens.numel() - 1) // a.seq_len
    g = torch.Generator(device="cpu").manual_seed(0)

    def batch():
        starts = torch.randint(0, n_blocks, (a.batch,), generator=g) * a.seq_len
        idx = starts[:, None] + torch.arange(a.seq_len + 1)[None, :]
        blk = tokens[idx].to(torch.long).pin_memory().cuda(non_blocking=True)
        return blk[:, :-1], blk[:, 1:]

    def step(x, y):
        with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            logits = m(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1))
        scaler.scale(loss).backward(); scaler.step(opt); scaler.update(); opt.zero_grad(set_to_none=True)
        return loss

    f = step
    if "compile" in parts:
        f = torch.compile(step)
    elif "compile-ro" in parts:
        f = torch.compile(step, mode="reduce-overhead")
    staged = [batch() for _ in range(8)] if a.data == "staged" else None
    next_batch = (lambda i: staged[i % len(staged)]) if staged else (lambda i: batch())
    t0 = time.time()
    for i in range(a.warmup):
        loss = f(*next_batch(i))
    torch.cuda.synchronize(); warm_s = time.time() - t0
    if a.profile:  # the device time of each kernel per step, as runx's profile technique records it
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            for i in range(3):
                f(*next_batch(i))
            torch.cuda.synchronize()
        totals = {}
        for e in p.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                n, us = totals.get(e.name, (0, 0.0)); totals[e.name] = (n + 1, us + e.device_time_total)
        top = sorted(totals.items(), key=lambda kv: -kv[1][1])[:a.profile]
        print(json.dumps({"config": cfg, "kernel_ms_per_step": round(sum(us for _, us in totals.values()) / 3000, 3),
                          "kernels_per_step": sum(n for n, _ in totals.values()) / 3,
                          "top": [{"name": k[:120], "calls_per_step": n / 3, "ms_per_step": round(us / 3000, 3)}
                                  for k, (n, us) in top]}), flush=True)
    torch.cuda.reset_peak_memory_stats()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for i in range(a.steps):
        loss = f(*next_batch(i))
    e.record(); torch.cuda.synchronize()
    ms = s.elapsed_time(e) / a.steps
    params = sum(p.numel() for p in m.parameters())
    return {"peer": "pytorch-" + torch.__version__, "model": "gpt", "config": cfg, "data": a.data, "batch": a.batch,
            "seq_len": a.seq_len, "params": params, "ms_per_step": round(ms, 3),
            "samples_per_s": round(a.batch * 1000 / ms, 1), "tokens_per_s": round(a.batch * a.seq_len * 1000 / ms),
            "final_loss": round(loss.item(), 4), "warmup_s": round(warm_s, 1),
            "peak_mem_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--text", default="/usr/share/games/fortunes")
    ap.add_argument("--n-layer", type=int, default=8); ap.add_argument("--n-head", type=int, default=8)
    ap.add_argument("--d-model", type=int, default=512); ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--batch", type=int, default=256); ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--steps", type=int, default=50); ap.add_argument("--warmup", type=int, default=15)
    ap.add_argument("--configs", default="fp32,bf16,bf16+fused,bf16+fused+compile")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="after the warm-up, profile 3 steps and print the N kernels with the most device time")
    ap.add_argument("--data", choices=["step", "staged"], default="staged",
                    help="staged: 8 batches on the GPU before timing (runx keeps text tokens on the device); "
                         "step: each step gathers its blocks on the host, pins them and copies them")
    a = ap.parse_args()
    tokens = torch.frombuffer(bytearray(read_text(a.text)), dtype=torch.uint8)
    for cfg in a.configs.split(","):
        print(json.dumps(run(cfg, a, tokens)), flush=True)
