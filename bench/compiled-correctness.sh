#!/usr/bin/env bash
# Issue 13's correctness check: does runx's compiled step (compiled_step) train like its eager step?
#   bash bench/compiled-correctness.sh [SETTING...]      (default: bf16 bf16-det fp32-det)
# On the GPU machine after bench/gpu-checks.sh build|unpack (section compiled-check calls it). Each
# setting runs bench/experiments/compiled-step-weights.yaml (eager twice, compiled twice; the same initial
# weights and batches; each trial's weights exported) for 1 step and for 20 steps, and judges:
#   - every loss of every run against eager #1's, relative;
#   - the weights (bench/studies/compare_weights.py) measured against what training changed, |a-b| / |a-w0|,
#     w0 the weights all four started from (the same experiment after one step at lr 1e-12): eager #1
#     against eager #2 (the floor: the GPU's own run-to-run difference), against compiled #1, and
#     compiled #1 against compiled #2. After 1 step that is the gradients' difference (the first
#     SGD step moves the weights by lr x gradient), after 20 the trajectories'.
# Settings (why three: in bf16 with cuDNN's autotuning, two eager runs' first updates already differ
# by 61% of the update, H100 2026-12-05, so bf16 weights alone cannot tell a wrong step from noise):
#   bf16      the speed run's settings (bf16 + channels_last, batch 256, autotuned cuDNN). Losses
#             within 2e-2; weights: the compiled step's no further from the same eager step's in fp32
#             (the reference, run beside) than 1.5x eager bf16's are. Eager against compiled and eager
#             against eager are listed: Inductor rounds bf16 in other places than eager (fused kernels
#             keep fp32 between ops), which is a difference but not an error.
#   bf16-det  the same under the determinism technique (deterministic cuDNN, no autotuning): eager
#             against eager and compiled against compiled must be equal to the bit; eager against
#             compiled is then Inductor's own bf16 rounding alone (losses within 2e-2; weights judged
#             against fp32 as above).
#   fp32-det  fp32 (TF32 off) + channels_last, batch 64, deterministic: the compiled step's arithmetic
#             against eager's at fp32 rounding. The scale of that rounding is measured beside it:
#             eager channels-last against eager contiguous (other cuDNN kernels and reduction orders,
#             the same arithmetic). After 1 step: losses within 1e-4, weights within the larger of
#             1e-3 of the update (the gradient) and 1.5x that reordering's. After 20 steps: losses
#             within the larger of 1e-4 and 1.5x the reordering's, weights within the larger of
#             1e-2 of the update and 1.5x the reordering's. (Why the floor after 1 step too: on the
#             H200, 2026-12-06, the two eager layouts' first updates already differ by 2.4e-2 of the
#             update, mostly in BatchNorm biases, whose gradients are sums that nearly cancel.)
# Environment: R (runx), DB (results store), OUT (logs), EXP (the experiment), SETS (extra --set
# arguments for every run, e.g. a CPU stand-in: compiled trials are then incompatible, their rows
# missing), NO_COMPILE=1 (skip `runx compile`), CORRECT_STEPS (the step counts run, default "1 20").
# Exit status: the number of failed verdicts.
set -uo pipefail
R=${R:-./build-device/runx}
OUT=${OUT:-/tmp/gpu-checks}
DB=${DB:-$OUT/gpu.db}
EXP=${EXP:-bench/experiments/compiled-step-weights.yaml}
read -r -a EXTRA <<< "${SETS:-}"
mkdir -p "$OUT"
failed=0

source "$(dirname "${BASH_SOURCE[0]}")/checks-lib.sh"  # log
verdict() { "$@" || failed=$((failed + 1)); }

settings() {  # setting -> its --set arguments
  case $1 in
    bf16) S=() ;;
    bf16-det) S=(--set 'optimizations.determinism={warn_only: true}') ;;
    fp32-det) S=(--set precision=fp32 --set data.batch_size=64 --set 'optimizations.determinism={warn_only: true}') ;;
    *) echo "unknown setting '$1' (bf16, bf16-det, fp32-det)"; exit 2 ;;
  esac
  S+=("${EXTRA[@]}")
}

run() { $R "$EXP" --db "$DB" --force --set train.warmup_steps=0 "${S[@]}" "$@"; }

weights() {  # label -> the weights files its trials of the latest run exported, in trial order
  $R query --db "$DB" --format csv "SELECT e.value FROM environment e JOIN trial_summary t ON t.trial_id = e.trial_id
    WHERE e.key = 'export.weights' AND t.run_id = (SELECT max(id) FROM runs) AND t.label = '$1'
    ORDER BY t.trial_id" | tail -n +2 | tr -d '"\r'
}

losses() {  # BOUND [RUN]: every loss of RUN (default the latest) against its eager #1's, verdict at BOUND (SQL)
  local out run=${2:-"(SELECT max(id) FROM runs)"}
  out=$($R query --db "$DB" "WITH t AS (SELECT trial_id, label, status,
      ROW_NUMBER() OVER (PARTITION BY label ORDER BY trial_id) AS r FROM trial_summary WHERE run_id = $run),
    e AS (SELECT s.phase, s.step, s.loss FROM steps s JOIN t USING (trial_id) WHERE t.label = 'baseline' AND t.r = 1)
    SELECT t.label || ' #' || t.r AS run, t.status, count(s.step) AS steps,
      max(abs(s.loss - e.loss) / abs(e.loss)) AS worst_rel_to_eager_1, $1 AS bound,
      CASE WHEN t.status = 'ok' AND count(s.step) > 0 AND max(abs(s.loss - e.loss) / abs(e.loss)) <= $1
        THEN 'ok' ELSE 'FAILED' END AS verdict
    FROM t LEFT JOIN steps s USING (trial_id) LEFT JOIN e ON e.phase = s.phase AND e.step = s.step
    WHERE NOT (t.label = 'baseline' AND t.r = 1) GROUP BY t.trial_id ORDER BY t.trial_id") || return 1
  echo "$out"
  ! grep -q FAILED <<< "$out"
}

latest_run() { $R query --db "$DB" --format csv "SELECT max(id) FROM runs" | tail -n 1 | tr -d '"\r'; }

loss_floor() {  # RUN_A RUN_B: the largest relative difference between the two runs' first eager losses (0 if none)
  $R query --db "$DB" --format csv "WITH f AS (SELECT run_id, min(trial_id) AS trial_id FROM trial_summary
      WHERE label = 'baseline' AND status = 'ok' AND run_id IN ($1, $2) GROUP BY run_id)
    SELECT coalesce(max(abs(b.loss - a.loss) / abs(a.loss)), 0) FROM steps a JOIN steps b USING (phase, step)
    WHERE a.trial_id = (SELECT trial_id FROM f WHERE run_id = $1) AND b.trial_id = (SELECT trial_id FROM f WHERE run_id = $2)" |
    tail -n 1 | tr -d '"\r'
}

compare() {  # name a b [compare_weights.py options]
  local name=$1 a=$2 b=$3; shift 3
  if [ -z "$a" ] || [ -z "$b" ]; then echo "[$name: no weights: a trial did not export (see the run's log)]"; return 1; fi
  TAIL=4 log "$name" python3 bench/studies/compare_weights.py "$a" "$b" --initial "$W0" --show 5 "$@"
}

chosen=("$@"); [ ${#chosen[@]} -gt 0 ] || chosen=(bf16 bf16-det fp32-det)
# The packages first, side by side (about 2.5 minutes each; bf16 and bf16-det share one)
declare -A compiling=()
for setting in "${chosen[@]}"; do
  settings "$setting"; key=${setting%%-*}
  if [ -n "${NO_COMPILE:-}" ] || [ -n "${compiling[$key]:-}" ]; then continue; fi
  compiling[$key]=1
  $R compile "$EXP" --db "$DB" "${S[@]}" > "$OUT/correct-$key-pkg.log" 2>&1 &
done
wait
for key in "${!compiling[@]}"; do echo "[correct-$key-pkg]"; tail -n 3 "$OUT/correct-$key-pkg.log"; done

for setting in "${chosen[@]}"; do
  echo; echo "=== correctness: $setting ($(date +%T))"; settings "$setting"
  TAIL=3 log "correct-$setting-w0" run --set repeats=1 --set train.optimizer.lr=1e-12 --set train.steps=1
  W0=$(weights baseline | head -n 1)
  for steps in ${CORRECT_STEPS:-1 20}; do
    n="correct-$setting-$steps"
    TAIL=6 log "$n-runx" run --set train.steps="$steps"
    RUN=$(latest_run)
    E=($(weights baseline)) C=($(weights compiled_step))
    E1=${E[0]:-} E2=${E[1]:-} C1=${C[0]:-} C2=${C[1]:-}
    [ "$steps" = 1 ] && bound=1e-3 || bound=1e-2
    if [ "$setting" = fp32-det ]; then
      # The scale of fp32 rounding: the same eager step summing in another order (contiguous
      # tensors: other cuDNN kernels and BatchNorm reductions); this run's compiled trial is
      # incompatible (no such package). H200: 2.4e-2 of the update after 1 step (CPU stand-in,
      # resnet18: 1.3e-5), 1.19 after 20 (the trajectories part); the bounds are the larger of the
      # fixed one and 1.5x it.
      TAIL=3 log "$n-contiguous-runx" run --set train.steps="$steps" --set repeats=1 \
        --set 'optimizations={compiled_step: {package: auto}, export: {}, determinism: {warn_only: true}}'
      F=$(weights baseline | head -n 1)
      LF=$(loss_floor "$RUN" "$(latest_run)")
      compare "$n-eager-contiguous" "$E1" "$F"
      echo "[$n: losses, eager channels-last against eager contiguous: ${LF:-none}]"
    fi
    case $setting in
      bf16)
        verdict log "$n-losses" losses 2e-2 "$RUN"
        compare "$n-eager-eager" "$E1" "$E2"
        compare "$n-eager-compiled" "$E1" "$C1" --floor "$E2" --update-tolerance 0 --tolerance 0
        compare "$n-compiled-compiled" "$C1" "$C2" ;;
      bf16-det)
        verdict log "$n-losses" losses 2e-2 "$RUN"
        verdict compare "$n-eager-eager" "$E1" "$E2" --tolerance 0 --update-tolerance 0
        verdict compare "$n-compiled-compiled" "$C1" "$C2" --tolerance 0 --update-tolerance 0
        compare "$n-eager-compiled" "$E1" "$C1" ;;
      fp32-det)
        verdict compare "$n-eager-eager" "$E1" "$E2" --tolerance 0 --update-tolerance 0
        [ "$steps" = 1 ] && loss_bound=1e-4 || loss_bound="max(1e-4, 1.5 * ${LF:-0})"
        verdict log "$n-losses" losses "$loss_bound" "$RUN"
        verdict compare "$n-eager-compiled" "$E1" "$C1" --update-tolerance "$bound" --floor "$F" ;;
    esac
    if [ "$setting" != fp32-det ]; then
      # The reference a bf16 step is read against: the same eager step in fp32 (its compiled trial
      # is incompatible: no such package). Inductor's fused kernels round bf16 in other places than
      # eager's, so compiled against eager is more than eager's run-to-run noise (H100 2026-12-06,
      # 1 step: 1.17 of the update against eager-eager's 0.71) without being less accurate: the
      # verdict asks that the compiled step's weights be no further from fp32's than 1.5x eager's are.
      TAIL=3 log "$n-fp32-runx" run --set train.steps="$steps" --set repeats=1 --set precision=fp32
      REF=$(weights baseline | head -n 1)
      compare "$n-fp32-eager" "$REF" "$E1"
      verdict compare "$n-fp32-compiled" "$REF" "$C1" --floor "$E1" --update-tolerance 0 --tolerance 0
    fi
  done
done
echo; echo "=== correctness: $failed failed verdicts"
exit "$failed"
