"""Peer measurement for runx's data_parallel: PyTorch DistributedDataParallel under torchrun, the
same work as bench/experiments/data-parallel-resnet50.yaml (ResNet-50, SGD momentum, synthetic 224x224, a
fixed batch per rank, bf16 autocast, channels_last, NCCL, DDP's default 25 MiB buckets).

torchrun --standalone --nproc_per_node N bench/peers/peer_ddp.py --batch 256 --steps 40 --warmup 15
Rank 0 prints one JSON line: {"peer": ..., "world_size": N, "batch_per_rank": ..., "ms_per_step": ...,
"samples_per_s": <global, all ranks>, ...}. Step time is rank 0's, from CUDA events over the
measured steps (every rank waits for the all-reduce, so the ranks' step times agree).
"""
import argparse, json, os, time
import torch, torch.distributed as dist, torchvision

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256); ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=15); ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--precision", default="bf16", choices=["fp32", "bf16"])
    ap.add_argument("--no-channels-last", action="store_true")
    a = ap.parse_args()
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    fmt = torch.contiguous_format if a.no_channels_last else torch.channels_last
    m = torchvision.models.resnet50().cuda().to(memory_format=fmt)
    ddp = torch.nn.parallel.DistributedDataParallel(m, device_ids=[local])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(a.batch, 3, a.image, a.image, device="cuda").contiguous(memory_format=fmt)
    y = torch.randint(0, 1000, (a.batch,), device="cuda")
    amp = a.precision == "bf16"
    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    t0 = time.time()
    for _ in range(a.warmup): step()
    torch.cuda.synchronize(); warm_s = time.time() - t0
    dist.barrier()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(a.steps): step()
    e.record(); torch.cuda.synchronize()
    ms = s.elapsed_time(e) / a.steps
    if rank == 0:
        print(json.dumps({"peer": "pytorch-ddp-" + torch.__version__, "model": "resnet50", "world_size": world,
                          "batch_per_rank": a.batch, "precision": a.precision, "channels_last": not a.no_channels_last,
                          "ms_per_step": round(ms, 3), "samples_per_s": round(world * a.batch * 1000 / ms, 1),
                          "warmup_s": round(warm_s, 1)}), flush=True)
    dist.destroy_process_group()

if __name__ == "__main__":
    main()
