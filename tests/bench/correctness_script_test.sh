#!/usr/bin/env bash
# bench/compiled-correctness.sh end to end on the CPU (ctest Bench.CorrectnessScriptOnCpu): the
# script only meets a real package on the GPU machine, where a broken query, a missing weights file
# or a verdict wired to the wrong pair costs device time. Here it runs its CPU stand-in (ResNet-18,
# 32x32, batch 8, 1 step; compiled trials incompatible, as on any runx without AOTInductor) and the
# test asserts what must hold without a package: the eager runs' bit-equality verdicts pass, the
# fp32 floor and the fp32 reference are measured, every compiled comparison fails for want of
# weights, and the exit status counts exactly those failed verdicts.
#   tests/bench/correctness_script_test.sh RUNX
set -uo pipefail
runx=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
cd "$root"
export PATH=/usr/bin:$PATH  # Debian's python3, which has torch (bench/studies/compare_weights.py)
SETS="--set device=cpu --set model.name=resnet18 --set data.shape=[3,32,32] --set data.num_classes=10 \
--set model.num_classes=10 --set data.batch_size=8 --set threads=1" NO_COMPILE=1 CORRECT_STEPS=1 R=$runx OUT=$out \
  bash bench/compiled-correctness.sh bf16-det fp32-det > "$out/all.txt" 2>&1
status=$?
fail=0
expect() { grep -qF -- "$1" "$out/all.txt" || { echo "missing: $1"; fail=1; }; }
expect "[correct-bf16-det-1-eager-eager rc=0]"
expect "[correct-bf16-det-1-fp32-eager rc=0]"
expect "[correct-bf16-det-1-compiled-compiled: no weights: a trial did not export (see the run's log)]"
expect "[correct-bf16-det-1-fp32-compiled: no weights: a trial did not export (see the run's log)]"
expect "[correct-fp32-det-1-eager-contiguous rc=0]"
expect "[correct-fp32-det-1-eager-eager rc=0]"
expect "[correct-fp32-det-1-eager-compiled: no weights: a trial did not export (see the run's log)]"
expect "[correct-fp32-det-1-losses rc=1]"
expect "=== correctness: 5 failed verdicts"
# bit-equal eager runs, judged at 0
[ "$(grep -c 'verdict: ok (parameters overall 0.000e+00 <= 0, against the update <= 0; integer buffers equal)' "$out/all.txt")" = 2 ] ||
  { echo "expected two bit-equality verdicts that pass"; fail=1; }
# the fp32 reference and the layout floor measured something (bf16 against fp32 differs)
grep -A4 '^\[correct-bf16-det-1-fp32-eager rc=0\]' "$out/all.txt" | grep -q 'against the update: |a-b| / |a-w0| = [1-9]' ||
  { echo "bf16 against the fp32 reference: no difference measured"; fail=1; }
[ "$status" = 5 ] || { echo "exit status $status, expected 5 (the failed verdicts)"; fail=1; }
[ "$fail" = 0 ] || { echo "--- the script's output:"; cat "$out/all.txt"; }
exit "$fail"
