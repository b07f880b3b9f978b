"""Where a traced model's shape constants live, and what it costs: torchvision's ViT-B/16 traced on
the GPU, saved, then trained in Python (bf16 autocast, SGD momentum, batch 128, TorchScript's plain
interpreter as runx runs it) three ways, in one process:
  eager        the nn.Module itself (PyTorch eager, the peer)
  load-cuda    torch.jit.load(f, map_location="cuda"): every tensor onto the GPU, the trace's
               0-dim integer constants (its shape arithmetic) included
  load-host    the same file with those constants put back on the CPU (what runx does on load)
Prints the constants found and one JSON line per way: {"way", "ms_per_step", "ratio_to_eager"}.

    python3 bench/studies/probe_ts_constants.py [--model vit_b_16] [--batch 128] [--steps 30]
"""
import argparse, io, json, os, sys, torch, torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from peer_torchscript import time_training  # noqa: E402


def int_scalar_constants(module):
    """prim::Constant nodes holding 0-dim integer tensors, in every method's graph."""
    found = []
    for m in module.modules():  # the module itself first
        for name in ("forward",):
            if not hasattr(m, name) or not hasattr(getattr(m, name), "graph"):
                continue
            for node in getattr(m, name).graph.findAllNodes("prim::Constant"):
                if node.output().type().kind() == "TensorType":
                    t = node.t("value")
                    if t.dim() == 0 and not t.is_floating_point():
                        found.append(node)
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="vit_b_16"); ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=30); ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    torch._C._set_graph_executor_optimize(False)  # runx's default: the plain interpreter
    torch.manual_seed(0)
    m = getattr(torchvision.models, a.model)(num_classes=1000).cuda().train()
    x = torch.randn(a.batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (a.batch,), device="cuda")
    buf = io.BytesIO()
    torch.jit.save(torch.jit.trace(m, torch.randn(2, 3, 224, 224, device="cuda"), check_trace=False), buf)
    results = {"eager": time_training(m, m.parameters(), x, y, True, a.steps, a.warmup)}
    for way in ("load-cuda", "load-host"):
        buf.seek(0)
        ts = torch.jit.load(buf, map_location="cuda")
        consts = int_scalar_constants(ts)
        if way == "load-host":
            for node in consts:
                node.t_("value", node.t("value").cpu())
        print(f"{way}: {len(consts)} integer scalar constants in the methods' graphs, on",
              sorted({str(n.t('value').device) for n in consts}), flush=True)
        results[way] = time_training(ts, ts.parameters(), x, y, True, a.steps, a.warmup)
    for way, ms in results.items():
        print(json.dumps({"model": a.model, "way": way, "batch": a.batch, "ms_per_step": round(ms, 3),
                          "ratio_to_eager": round(results["eager"] / ms, 4)}), flush=True)


if __name__ == "__main__":
    main()
