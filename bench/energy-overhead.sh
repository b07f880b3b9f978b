#!/usr/bin/env bash
# What runx's energy meter costs (issue 31): each experiment run with the meter switched off
# (RUNX_ENERGY=off) and on, alternated ROUNDS times (default 2), every run 3 trial processes
# (repeats: 3), then `runx compare OFF ON` of the last round: the throughput ratio on/off with its
# 95% interval and verdict. Two experiments: ResNet-50 bf16 + channels_last at batch 256 (the GPU
# sets the pace) and a small CNN at batch 32 (the launching CPU sets it, where a polling thread
# could get in its way). On the GPU machine after bench/gpu-checks.sh build; any CUDA machine:
#   bash bench/energy-overhead.sh          # OUT (default /tmp/gpu-checks), R (runx), ROUNDS, EXPERIMENTS (resnet50 cnn),
#                                          # SETS (more --set arguments, e.g. a CPU stand-in: "--set device=cpu --set train.steps=20")
# On a machine without a meter both sides are unmetered, and the comparison shows run-to-run noise.
set -uo pipefail
OUT=${OUT:-/tmp/gpu-checks}
R=${R:-./build-device/runx}
DB=$OUT/energy-overhead.db
mkdir -p "$OUT"
[ -f build-device/env.sh ] && source build-device/env.sh
cat > "$OUT/overhead-resnet50.yaml" <<'YAML'
name: overhead-resnet50
device: cuda
seed: 0
precision: bf16
model: {name: resnet50, num_classes: 1000}
data: {source: synthetic, shape: [3, 224, 224], num_classes: 1000, batch_size: 256}
train: {optimizer: {name: sgd, lr: 0.1, momentum: 0.9}, warmup_steps: 15, steps: 40, eval: false}
optimizations: {channels_last: {}}
repeats: 3
YAML
cat > "$OUT/overhead-cnn.yaml" <<'YAML'
name: overhead-cnn
device: cuda
seed: 0
model: {name: cnn, channels: [16, 32]}
data: {source: synthetic, shape: [3, 32, 32], num_classes: 10, batch_size: 32}
train: {optimizer: {name: sgd, lr: 0.01}, warmup_steps: 20, steps: 400, eval: false}
repeats: 3
YAML
for e in ${EXPERIMENTS:-resnet50 cnn}; do
  f=$OUT/overhead-$e.yaml
  for i in $(seq 1 "${ROUNDS:-2}"); do
    RUNX_ENERGY=off $R "$f" --db "$DB" ${SETS:-} --force -q --tag "$e-off-$i" > /dev/null || echo "[$e off $i failed]"
    $R "$f" --db "$DB" ${SETS:-} --force -q --tag "$e-on-$i" > /dev/null || echo "[$e on $i failed]"
  done
  echo "== $e: meter off (A) against on (B), round ${ROUNDS:-2}"
  $R compare --db "$DB" "$e-off-${ROUNDS:-2}" "$e-on-${ROUNDS:-2}"
  $R query --db "$DB" "SELECT r.tag, count(*) AS trials, printf('%.1f', avg(t.samples_per_s)) AS samples_per_s,
    CASE WHEN count(j.value) = 0 THEN '-' ELSE printf('%.4f', avg(j.value)) END AS j_per_sample, count(j.value) AS metered
    FROM trial_summary t LEFT JOIN metrics j ON j.trial_id = t.trial_id AND j.name = 'joules_per_sample' AND j.step IS NULL JOIN runs r ON r.id = t.run_id WHERE t.experiment = 'overhead-$e' GROUP BY r.id ORDER BY r.id"
done
