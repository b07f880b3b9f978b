"""Compares two kernel profiles ({"steps": n, "kernels": {name: [calls, us]}}, written by
compile_step.py --profile-dir and by compiled_step_probe with PROBE_PROFILE): time per step by
kind of kernel side by side, then the kernels whose time differs most.

  python3 bench/studies/kernel_diff.py prof/joint-compile.json prof/cxx.json
"""
import json, re, sys

KINDS = [  # first match wins
    ("triton", r"^triton"),
    ("conv (cuDNN/CUTLASS)", r"cudnn|conv|xmma|implicit_convolve|dgrad|wgrad|fprop|sm\d+_.*(nhwc|nchw)|cutlass"),
    ("gemm", r"gemm|Kernel2|cublas|sm\d+_xmma_gemm"),
    ("batch norm (ATen)", r"batch_norm|bn_|welford"),
    ("copy / memset", r"copy|Memcpy|Memset|memset"),
    ("foreach / optimizer", r"foreach|multi_tensor"),
    ("reduce (ATen)", r"reduce"),
    ("elementwise (ATen)", r"elementwise|vectorized|unrolled"),
]

def kind(name):
    return next((k for k, rx in KINDS if re.search(rx, name, re.I)), "other")

def load(path):
    d = json.load(open(path))
    n = d["steps"]
    return {name: (c / n, us / n / 1000) for name, (c, us) in d["kernels"].items()}

def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    names = [sys.argv[1], sys.argv[2]]
    print(f"{'kind':<24}{'A calls':>9}{'A ms':>9}{'B calls':>9}{'B ms':>9}   A={names[0]} B={names[1]}")
    for k in [k for k, _ in KINDS] + ["other", "total"]:
        sel = lambda p: [v for n, v in p.items() if k == "total" or kind(n) == k]
        ca, ma = sum(c for c, _ in sel(a)), sum(m for _, m in sel(a))
        cb, mb = sum(c for c, _ in sel(b)), sum(m for _, m in sel(b))
        if ca or cb:
            print(f"{k:<24}{ca:>9.0f}{ma:>9.2f}{cb:>9.0f}{mb:>9.2f}")
    print("\nlargest differences (ms per step, B - A):")
    diff = sorted(set(a) | set(b), key=lambda n: -abs(b.get(n, (0, 0))[1] - a.get(n, (0, 0))[1]))
    for n in diff[:25]:
        (ca, ma), (cb, mb) = a.get(n, (0, 0)), b.get(n, (0, 0))
        print(f"{mb - ma:>+8.2f}  A {ca:>4.0f}x {ma:>7.2f}  B {cb:>4.0f}x {mb:>7.2f}  {n[:110]}")

if __name__ == "__main__":
    main()
