"""Compares two weights.pt files written by runx's export technique (torch::serialize archives of a
model's parameters and buffers), tensor by tensor: e.g. the eager and the compiled_step trial of one
experiment after the same steps from the same initial weights and data.

  python3 bench/studies/compare_weights.py A/weights.pt B/weights.pt [--tolerance 2e-2] [--show 10]

For each tensor: the relative L2 difference |a - b| / |a| (integer tensors: equal or not) and the
largest absolute difference, the --show largest listed. Overall: the same over all floating
tensors together, sqrt(sum |a - b|^2) / sqrt(sum |a|^2), for the parameters and for the buffers.
The verdict is ok when the parameters' overall relative difference is at most --tolerance and every
integer tensor is equal; exit status 1 otherwise, 2 when the files do not hold the same tensors or one
is not a weights file.
The verdict is not per tensor: a tensor near zero (a BatchNorm bias after a few steps from zero)
has a relative difference of order 1 from rounding alone, which says nothing about the model.

--initial W0.pt (the weights both runs started from): the difference is also measured against what
training changed, sqrt(sum |a - b|^2) / sqrt(sum |a - w0|^2) over the parameters, the sharper
figure when a few steps at a small learning rate leave the weights close to where they started;
with --update-tolerance T the verdict also asks that figure to be at most T.

--floor A2.pt (a second run of A's own kind, e.g. eager again): where the GPU is not deterministic,
A and A2 already differ; the verdict's bound on |a-b| / |a-w0| becomes the larger of
--update-tolerance and --floor-factor (default 1.5) times |a-a2| / |a-w0|, and --tolerance's on the
parameters' overall difference the larger of --tolerance and the factor times A against A2's: B must
differ from A by no more than A's own run-to-run difference allows (needs --initial).
"""
import argparse, os, sys
import torch

class NotWeights(Exception):
    pass

def tensors(path):
    """name -> (tensor, is a parameter)"""
    if not os.path.isfile(path):
        raise NotWeights(f"{path}: no such file")
    try:
        m = torch.jit.load(path, map_location="cpu")
    except (RuntimeError, ValueError, OSError) as e:
        raise NotWeights(f"{path}: not a weights.pt written by runx's export technique (a TorchScript "
                         f"archive of the model's parameters and buffers): {str(e).splitlines()[0]}") from None
    out = {n: (t, True) for n, t in m.named_parameters()}
    out.update({n: (t, False) for n, t in m.named_buffers()})
    return out

def differences(ta, tb, t0):
    """Over the floating parameters: |a-b|/|a|, |a-b|/|a-w0| and |a-w0|/|w0| (the last two inf and 0 without t0)"""
    d2 = x2 = u2 = w2 = 0.0
    for name, (x, is_param) in ta.items():
        if not (is_param and x.is_floating_point()):
            continue
        x, y = x.double(), tb[name][0].double()
        d2 += (x - y).pow(2).sum().item()
        x2 += x.pow(2).sum().item()
        if t0 is not None:
            w0 = t0[name][0].double()
            u2 += (x - w0).pow(2).sum().item()
            w2 += w0.pow(2).sum().item()
    rel = lambda n, d: (n / d) ** 0.5 if d > 0 else (0.0 if n == 0 else float("inf"))
    return rel(d2, x2), rel(d2, u2), rel(u2, w2)

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a"); ap.add_argument("b")
    ap.add_argument("--tolerance", type=float, default=2e-2)
    ap.add_argument("--show", type=int, default=10, help="the tensors that differ most, listed")
    ap.add_argument("--initial", help="the weights both runs started from (a weights.pt)")
    ap.add_argument("--update-tolerance", type=float, help="with --initial: the verdict's bound on |a-b| / |a-w0|")
    ap.add_argument("--floor", help="a second run of A's kind: the bounds scale with A against it (needs --initial)")
    ap.add_argument("--floor-factor", type=float, default=1.5)
    a = ap.parse_args()
    if a.floor and not a.initial:
        ap.error("--floor needs --initial")
    try:
        ta, tb = tensors(a.a), tensors(a.b)
        t0 = tensors(a.initial) if a.initial else None
        tf = tensors(a.floor) if a.floor else None
    except NotWeights as e:
        print(f"compare_weights.py: error: {e}", file=sys.stderr)
        return 2
    if a.floor:
        if set(tf) != set(ta):
            print(f"{a.floor} does not hold the same tensors as {a.a}")
            return 2
        floor_overall, floor_update, _ = differences(ta, tf, t0)
        print(f"floor, A against {a.floor}: parameters overall {floor_overall:.3e}, against the update {floor_update:.3e}")
        a.tolerance = max(a.tolerance, a.floor_factor * floor_overall)
        a.update_tolerance = max(a.update_tolerance or 0.0, a.floor_factor * floor_update)
        print(f"bounds: parameters overall {a.tolerance:.3e}, against the update {a.update_tolerance:.3e} "
              f"(the larger of the tolerance and {a.floor_factor:g} x the floor)")
    if t0 is not None and set(t0) != set(ta):
        print(f"{a.initial} does not hold the same tensors as {a.a}")
        return 2
    if set(ta) != set(tb):
        only_a, only_b = sorted(set(ta) - set(tb)), sorted(set(tb) - set(ta))
        print(f"not the same tensors: only in {a.a}: {only_a[:5]}; only in {a.b}: {only_b[:5]}")
        return 2
    rows, bad = [], 0
    buffer_sums = [0.0, 0.0]  # over the floating buffers: sum |a-b|^2, sum |a|^2 (the parameters': differences())
    for name in sorted(ta):
        (x, is_param), (y, _) = ta[name], tb[name]
        if x.shape != y.shape:
            print(f"{name}: shapes differ, {list(x.shape)} and {list(y.shape)}")
            return 2
        if x.is_floating_point():
            x, y = x.double(), y.double()
            d = x - y
            d2, x2 = d.pow(2).sum().item(), x.pow(2).sum().item()
            rel = (d2 / x2) ** 0.5 if x2 > 0 else d2 ** 0.5
            worst = d.abs().max().item() if x.numel() else 0.0
            if not is_param:
                buffer_sums[0] += d2
                buffer_sums[1] += x2
            ok = rel <= a.tolerance
        else:
            rel = 0.0 if torch.equal(x, y) else float("inf")
            worst = (x - y).abs().max().item() if x.numel() else 0
            ok = rel == 0.0
            bad += not ok  # integer buffers (BatchNorm's step counts) must be equal
        rows.append((rel, worst, name, ok))
    rows.sort(reverse=True)
    print(f"{len(rows)} tensors; relative L2 difference |a-b|/|a|; the {a.show} largest:")
    print(f"{'tensor':<40}{'relative':>12}{'max abs':>12}")
    for rel, worst, name, ok in rows[: a.show]:
        print(f"{name:<40}{rel:>12.3e}{worst:>12.3e}{'' if ok else '  above ' + format(a.tolerance, 'g')}")
    floats = [r for r in rows if ta[r[2]][0].is_floating_point()]
    median = sorted(r[0] for r in floats)[len(floats) // 2] if floats else 0.0
    params_overall, rel_update, moved = differences(ta, tb, t0)
    d2, x2 = buffer_sums
    overall = {True: params_overall, False: (d2 / x2) ** 0.5 if x2 > 0 else d2 ** 0.5}
    print(f"per tensor: worst {rows[0][0]:.3e} ({rows[0][2]}), median {median:.3e}")
    print(f"overall: parameters {overall[True]:.3e}, buffers {overall[False]:.3e}")
    reasons = [f"parameters overall {overall[True]:.3e} > {a.tolerance:g}"] if overall[True] > a.tolerance else []
    if t0 is not None:
        print(f"against the update: |a-b| / |a-w0| = {rel_update:.3e} (training moved the parameters by "
              f"|a-w0| / |w0| = {moved:.3e})")
        if a.update_tolerance is not None and not rel_update <= a.update_tolerance:
            reasons.append(f"against the update {rel_update:.3e} > {a.update_tolerance:g}")
    reasons += [f"{bad} integer buffers differ"] if bad else []
    print(f"verdict: FAILED ({'; '.join(reasons)})" if reasons else
          f"verdict: ok (parameters overall {overall[True]:.3e} <= {a.tolerance:g}"
          f"{'' if a.update_tolerance is None or t0 is None else f', against the update <= {a.update_tolerance:g}'}; integer buffers equal)")
    return 1 if reasons else 0

if __name__ == "__main__":
    sys.exit(main())
