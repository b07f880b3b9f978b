"""Compares two weights.pt files written by runx's export technique (torch::serialize archives of a
model's parameters and buffers), tensor by tensor: e.g. the eager and the compiled_step trial of one
experiment after the same steps from the same initial weights and data.

  python3 bench/compare_weights.py A/weights.pt B/weights.pt [--tolerance 2e-2] [--show 10]

For each tensor: the relative L2 difference |a - b| / |a| (integer tensors: equal or not) and the
largest absolute difference. The verdict is ok when every floating tensor's relative difference is
at most --tolerance and every integer tensor is equal; exit status 1 otherwise, 2 when the two files
do not hold the same tensors.
"""
import argparse, sys
import torch

def tensors(path):
    m = torch.jit.load(path, map_location="cpu")
    out = {n: t for n, t in m.named_parameters()}
    out.update({n: t for n, t in m.named_buffers()})
    return out

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a"); ap.add_argument("b")
    ap.add_argument("--tolerance", type=float, default=2e-2)
    ap.add_argument("--show", type=int, default=10, help="the tensors that differ most, listed")
    a = ap.parse_args()
    ta, tb = tensors(a.a), tensors(a.b)
    if set(ta) != set(tb):
        only_a, only_b = sorted(set(ta) - set(tb)), sorted(set(tb) - set(ta))
        print(f"not the same tensors: only in {a.a}: {only_a[:5]}; only in {a.b}: {only_b[:5]}")
        return 2
    rows, bad = [], 0
    for name in sorted(ta):
        x, y = ta[name], tb[name]
        if x.shape != y.shape:
            print(f"{name}: shapes differ, {list(x.shape)} and {list(y.shape)}")
            return 2
        if x.is_floating_point():
            x, y = x.double(), y.double()
            norm = x.norm().item()
            rel = (x - y).norm().item() / norm if norm > 0 else (x - y).norm().item()
            worst = (x - y).abs().max().item() if x.numel() else 0.0
            ok = rel <= a.tolerance
        else:
            rel = 0.0 if torch.equal(x, y) else float("inf")
            worst = (x - y).abs().max().item() if x.numel() else 0
            ok = rel == 0.0
        bad += not ok
        rows.append((rel, worst, name, ok))
    rows.sort(reverse=True)
    print(f"{len(rows)} tensors; relative L2 difference |a-b|/|a|, tolerance {a.tolerance:g}")
    print(f"{'tensor':<40}{'relative':>12}{'max abs':>12}")
    for rel, worst, name, ok in rows[: a.show]:
        print(f"{name:<40}{rel:>12.3e}{worst:>12.3e}{'' if ok else '  FAILED'}")
    floats = [r for r in rows if ta[r[2]].is_floating_point()]
    median = sorted(r[0] for r in floats)[len(floats) // 2] if floats else 0.0
    print(f"worst {rows[0][0]:.3e} ({rows[0][2]}), median {median:.3e}; "
          f"verdict: {'ok' if bad == 0 else f'FAILED ({bad} tensors beyond the tolerance)'}")
    return 0 if bad == 0 else 1

if __name__ == "__main__":
    sys.exit(main())
