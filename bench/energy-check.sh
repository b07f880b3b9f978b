#!/usr/bin/env bash
# Energy per sample on the GPU machine, runx beside the PyTorch peer in one call (docs/benchmarks.md,
# "Energy per sample"). After bash ../shared/device/prepare.sh, with carry [".device"]:
#   bash bench/energy-check.sh
# Builds runx and the unit tests, runs the energy tests against the real driver's NVML, probes
# how often the H100's energy counter moves, then ResNet-50 training (fp32, and bf16 +
# channels_last) through runx and through bench/peers/peer_resnet50.py --energy, interleaved, and the
# CPU quickstart (RAPL, where the machine lets it be read). Results under $OUT.
set -euo pipefail
out=${OUT:-/tmp/energy-out}
mkdir -p "$out"
TARGETS="runx-app runx_unit_test fake_nvml" bash scripts/device-build-targets.sh -DRUNX_BUILD_TESTS=ON
source build-device/env.sh
mkdir -p /usr/share/datasets && ln -sfn /tmp/deps/usr/share/datasets/fashion-mnist /usr/share/datasets/fashion-mnist
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
./build-device/runx_unit_test --gtest_brief=1 --gtest_filter='GpuEnergy*:CpuEnergy*:TrialLoop*:TrialMetrics*:Doctor*'
./build-device/runx doctor | grep -E '^ *(energy|CUDA|  cuda)'
python3 bench/peers/nvml_energy.py --probe --seconds 3
db="$out/energy.db"
for round in 1 2; do
  ./build-device/runx experiments/resnet50.yaml --db "$db" -q --tag "fp32-$round" --set precision=fp32 --set 'optimizations={}'
  python3 bench/peers/peer_resnet50.py --configs fp32 --energy
  ./build-device/runx experiments/resnet50.yaml --db "$db" -q --tag "bf16cl-$round"
  python3 bench/peers/peer_resnet50.py --configs bf16+cl --energy
done
./build-device/runx compare fp32-1:baseline bf16cl-1:bf16+channels_last --db "$db" || true
./build-device/runx query --db "$db" "SELECT t.id, r.tag, m.name, round(m.value, 5) AS value FROM metrics m JOIN trials t ON t.id = m.trial_id JOIN runs r ON r.id = t.run_id WHERE m.name IN ('joules_per_sample', 'power_w', 'samples_per_s') ORDER BY t.id, m.name"
./build-device/runx experiments/quickstart.yaml --db "$out/cpu.db" -q || true
./build-device/runx query --db "$out/cpu.db" "SELECT key, value FROM environment WHERE key LIKE 'energy.%'" || true
./build-device/runx query --db "$out/cpu.db" "SELECT name, value FROM metrics WHERE name IN ('joules_per_sample', 'power_w')" || true
