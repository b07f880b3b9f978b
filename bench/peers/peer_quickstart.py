"""Peer measurement on the CPU: PyTorch (Python) training of experiments/quickstart.yaml's model, so
that runx's CPU figure has PyTorch's beside it from the same machine and the same LibTorch.

/usr/bin/python3 bench/peers/peer_quickstart.py [--configs fp32,bf16] [--warmup 5]
Prints one JSON line per config: {"config", "ms_per_step_median", "ms_p10", "ms_p90", "samples_per_s", "steps"}

The quickstart's trial in PyTorch: Fashion-MNIST's 60k training images (the IDX files of Debian's
dataset-fashion-mnist), scaled to [0, 1] and normalised with the same mean and std as runx's
source, shuffled each epoch; MLP 784-256-10 (Flatten, Linear, ReLU, Linear); AdamW lr 1e-3, weight
decay 1e-4; batch 128; one epoch (468 full batches) after --warmup steps. A step is timed like
runx's: from taking the batch to the end of the optimizer update (one CPU thread per LibTorch's
default). bf16: autocast on the CPU, as runx's amp does there. Debian's python3-torch is the same
LibTorch 1.13 as runx's, on the same libblas.so.3, so both run on one BLAS.

glibc's malloc: with its own thresholds (--malloc default) this Python process hands each freed
800 KB tensor back to the kernel and page-faults the next one in, which makes its steps slower
(--malloc default measures how much; docs/benchmarks-log.md has the figures); runx's process does not
pay it. So the
script's default, --malloc keep, first raises glibc's mmap and trim thresholds to 1 GiB (mallopt,
what MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ do), and the figure is PyTorch's own.
"""
import argparse, ctypes, gzip, json, os, statistics, time
import numpy as np
import torch
import torch.nn as nn

MEAN, STD = 0.2860, 0.3530  # runner/src/data/sources.h (kFashionMnistMean, kFashionMnistStd)


def images(path):
    with gzip.open(path) as f:
        raw = f.read()
    n = int.from_bytes(raw[4:8], "big")
    return torch.from_numpy(np.frombuffer(raw, np.uint8, offset=16).reshape(n, 784).copy())


def labels(path):
    with gzip.open(path) as f:
        raw = f.read()
    return torch.from_numpy(np.frombuffer(raw, np.uint8, offset=8).astype(np.int64))


def run(config, x, y, batch, warmup):
    torch.manual_seed(42)
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
    per_epoch = x.shape[0] // batch
    order = torch.randperm(x.shape[0])
    times = []
    for i in range(warmup + per_epoch):
        t0 = time.perf_counter()
        j = i % per_epoch
        idx = order[j * batch:(j + 1) * batch]
        xb, yb = x[idx], y[idx]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=config == "bf16"):
            loss = nn.functional.cross_entropy(net(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1000)
    q = statistics.quantiles(times, n=10)
    return {"config": config, "ms_per_step_median": round(statistics.median(times), 3), "ms_p10": round(q[0], 3),
            "ms_p90": round(q[-1], 3), "samples_per_s": round(batch * len(times) / (sum(times) / 1000), 1),
            "steps": len(times), "threads": torch.get_num_threads(), "torch": torch.__version__}


def blas():
    """The BLAS library this process loaded (as runx doctor's BLAS row)."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "/libblas.so" in line}
    return sorted(paths)[0] if paths else "none loaded"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--configs", default="fp32,bf16")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--malloc", choices=["keep", "default"], default="keep",
                    help="keep: glibc keeps freed memory (see above); default: glibc's own thresholds")
    a = ap.parse_args()
    if a.malloc == "keep":
        libc = ctypes.CDLL("libc.so.6")
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        assert libc.mallopt(M_MMAP_THRESHOLD, 1 << 30) == 1 and libc.mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1
    x = images(os.path.join(a.data, "train-images-idx3-ubyte.gz")).float().div_(255).sub_(MEAN).div_(STD)
    y = labels(os.path.join(a.data, "train-labels-idx1-ubyte.gz"))
    for config in a.configs.split(","):
        print(json.dumps({**run(config, x, y, a.batch, a.warmup), "malloc": a.malloc, "blas": blas()}), flush=True)


if __name__ == "__main__":
    main()
