"""Models nobody here wrote, for runx's `model: {name: torchscript}`, and PyTorch eager's figures for
the same work, so that runx can be compared side by side in ONE call on the GPU machine.

python3 bench/peers/peer_torchscript.py --export /tmp/ts      # writes /tmp/ts/<model>.pt, prints nothing else
python3 bench/peers/peer_torchscript.py --models vit_b_16,convnext_tiny --configs fp32,bf16,fp32+cl,bf16+cl
Models (torchvision, 1000 classes, 224x224): vit_b_16 (attention, LayerNorm, GELU) and convnext_tiny
(depthwise 7x7 convolutions, LayerNorm, GELU) traced with torch.jit.trace; mobilenet_v3_large
(depthwise convolutions, hardswish, squeeze-excitation) and resnet50 (plain convolutions) scripted
with torch.jit.script. Exported in training mode, on the GPU (--export-device).
Training: SGD momentum 0.9, cross-entropy, synthetic batches, as runx's bench/experiments/torchscript-models.yaml.
Prints one JSON line per (model, config): {"model", "config", "batch", "ms_per_step", "samples_per_s"}.
Configs: fp32 | bf16 (autocast) | +cl (channels_last model and input).
"""
import argparse, json, os, time, torch, torchvision

KINDS = {"vit_b_16": "trace", "convnext_tiny": "trace", "mobilenet_v3_large": "script", "resnet50": "script"}

def build(name):
    torch.manual_seed(0)
    return getattr(torchvision.models, name)(num_classes=1000)

def export(out, names, device):
    # Traced on the device it will train on: a trace bakes in the device of tensors its forward
    # creates (ConvNeXt's stochastic depth draws its mask on the CPU when traced there, and the
    # module then fails on the GPU with "Expected all tensors to be on the same device").
    os.makedirs(out, exist_ok=True)
    for name in names:
        m = build(name).to(device).train()
        if KINDS[name] == "trace":
            ts = torch.jit.trace(m, torch.randn(2, 3, 224, 224, device=device), check_trace=False)
        else:
            ts = torch.jit.script(m)
        torch.jit.save(ts, os.path.join(out, name + ".pt"))

def time_training(model, params, x, y, bf16, steps, warmup):
    """ms per training step (SGD momentum, PyTorch's default foreach update on CUDA; cross entropy;
    bf16 autocast when asked): CUDA events around `steps` steps after `warmup` untimed ones."""
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    for _ in range(warmup): step()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(steps): step()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / steps

def run(name, cfg, batch, steps, warmup):
    parts = cfg.split("+")
    prec, cl = parts[0], "cl" in parts
    torch.backends.cudnn.benchmark = True
    fmt = torch.channels_last if cl else torch.contiguous_format
    m = build(name).cuda().train().to(memory_format=fmt)
    x = torch.randn(batch, 3, 224, 224, device="cuda").contiguous(memory_format=fmt)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    ms = time_training(m, m.parameters(), x, y, prec == "bf16", steps, warmup)
    return {"peer": "pytorch-" + torch.__version__, "model": name, "config": cfg, "batch": batch,
            "ms_per_step": round(ms, 3), "samples_per_s": round(batch * 1000 / ms, 1)}

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--export", help="write the TorchScript files into this folder and exit")
    ap.add_argument("--export-device", default="cuda" if torch.cuda.is_available() else "cpu",
                    help="trace and script on this device (default: cuda when there is one)")
    ap.add_argument("--models", default=",".join(KINDS))
    ap.add_argument("--configs", default="fp32,bf16,fp32+cl,bf16+cl")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=30); ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    names = a.models.split(",")
    if a.export:
        export(a.export, names, a.export_device)
    else:
        for name in names:
            for cfg in a.configs.split(","):
                print(json.dumps(run(name, cfg, a.batch, a.steps, a.warmup)), flush=True)
