#!/usr/bin/env bash
# Scaling of ResNet-50 bf16 + channels_last training over 1, 2, 4 and 8 GPUs: runx's data_parallel
# (bench/experiments/data-parallel-resnet50.yaml, one sweep) against PyTorch DDP under torchrun
# (bench/peers/peer_ddp.py), on the same machine in the same call. Needs a machine with several GPUs,
# PyTorch with CUDA and torchvision, and runx built with NCCL (`runx doctor`; docs/running.md).
#   bench/data-parallel.sh                 # world sizes 1 2 4 8, cut to the GPUs there are
#   WORLD_SIZES="1 2" bench/data-parallel.sh
# Writes $OUT (default /tmp/runx-dp-bench): dp.db (runx's store), runx.log, ddp.jsonl, and prints
# one table: world size, samples/s and scaling efficiency (against world size 1) for each.
set -euo pipefail
cd "$(dirname "$0")/.."
R=${RUNX:-./build/runx}
OUT=${OUT:-/tmp/runx-dp-bench}
mkdir -p "$OUT"
gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())')
sizes=()
for n in ${WORLD_SIZES:-1 2 4 8}; do [ "$n" -le "$gpus" ] && sizes+=("$n"); done
[ ${#sizes[@]} -gt 0 ] || { echo "data-parallel.sh: no GPU" >&2; exit 1; }
echo "GPUs: $gpus; world sizes: ${sizes[*]}"

# runx: every world size of the file in one run (those above the GPU count are recorded incompatible).
"$R" bench/experiments/data-parallel-resnet50.yaml --db "$OUT/dp.db" --force 2>&1 | tee "$OUT/runx.log"
"$R" query --db "$OUT/dp.db" --format json "SELECT world_size, AVG(samples_per_s) AS samples_per_s,
   AVG(scaling_efficiency) AS scaling_efficiency FROM scaling WHERE run_id = (SELECT max(id) FROM runs)
   GROUP BY world_size ORDER BY world_size" > "$OUT/runx-scaling.json"

# PyTorch DDP: one torchrun per world size, twice (as the sweep's 2 repeats).
: > "$OUT/ddp.jsonl"
for n in "${sizes[@]}"; do
  for rep in 1 2; do
    torchrun --standalone --nproc_per_node "$n" bench/peers/peer_ddp.py --batch 256 --steps 40 --warmup 15 \
      | grep '^{' >> "$OUT/ddp.jsonl"
  done
done

python3 - "$OUT" <<'PY'
import json, sys, collections
out = sys.argv[1]
runx = {int(r["world_size"]): r for r in json.load(open(f"{out}/runx-scaling.json"))}
ddp = collections.defaultdict(list)
for line in open(f"{out}/ddp.jsonl"):
    r = json.loads(line); ddp[r["world_size"]].append(r["samples_per_s"])
ddp = {n: sum(v) / len(v) for n, v in ddp.items()}
print(f"{'GPUs':>4}  {'runx img/s':>11}  {'runx eff.':>9}  {'DDP img/s':>10}  {'DDP eff.':>8}  {'runx/DDP':>8}")
for n in sorted(set(runx) | set(ddp)):
    r, d = runx.get(n), ddp.get(n)
    reff = f"{r['scaling_efficiency']:.3f}" if r and r.get("scaling_efficiency") is not None else "-"
    deff = f"{d / (n * ddp[1]):.3f}" if d and 1 in ddp else "-"
    ratio = f"{r['samples_per_s'] / d:.3f}" if r and d else "-"
    print(f"{n:>4}  {r['samples_per_s'] if r else float('nan'):>11.1f}  {reff:>9}  {d or float('nan'):>10.1f}  {deff:>8}  {ratio:>8}")
PY
