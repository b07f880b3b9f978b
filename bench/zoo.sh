#!/usr/bin/env bash
# Models nobody here wrote, through runx as a user brings them (issue 31): each torchvision model is
# a python model (bench/zoo_models.py's build), so `runx compile` makes its TorchScript file (runx's
# eager baseline) and its compiled training step, and checks the step by training it against eager
# through runx's own loader before keeping it; `runx` then runs eager against compiled_step (and
# compiled_step + cuda_graphs), bf16 + channels_last, SGD with fused_optimizer's fused update in every
# variant (the peer's SGD is PyTorch's default foreach update in eager, and Inductor's fused one under
# torch.compile, which compiles opt.step() too); PyTorch eager and torch.compile of the same model run
# in the same call (tools/compile_step.py --configs eager,compile).
#   bash bench/zoo.sh compile [MODEL...]   # the packages, JOBS at a time (minutes each)
#   bash bench/zoo.sh measure [MODEL...]   # runx (--force: measured again, nothing reused) and the peer, one model after another
#   bash bench/zoo.sh table                # the rows so far, from the store and the peer logs
#   bash bench/zoo.sh warm [MODEL...]      # the peer's torch.compile once per model, JOBS at a time, figures discarded:
#                                          # measure's torch.compile then hits Inductor's on-disk caches (minutes saved a model);
#                                          # WARM_CONFIGS=compile,compile-max warms max-autotune's too (its autotuning is cached)
#   bash bench/zoo.sh peer [MODEL...]      # the peer alone, PEER_CONFIGS, with its kernels profiled (gpu_busy, graphs, graph
#                                          # breaks) into $W/MODEL-peer-profile.log: no runx, no package needed
#   bash bench/zoo.sh prepare [MODEL...]   # compile and warm side by side (JOBS=2 each: neither measures anything, and
#                                          # 3 + 3 at once fits the H100's memory where 6 compiles did not)
#   bash bench/zoo.sh pack | unpack        # the compiled-step packages (not the TorchScript files, which compile remakes in
#                                          # seconds) to $OUT/compiled-zoo-*.tgz, to copy into .devbin/ and carry; unpack puts them back
# On the GPU machine after bench/gpu-checks.sh build|unpack. Every failure is a row with its reason:
# the compile's (runx compile's log) or the trial's (the store). Environment: OUT (logs and the store,
# default /tmp/gpu-checks), R (runx), BATCH (default 128), STEPS (measured steps, default 100: energy per sample needs 0.5 s of them),
# PYTHON (runx compile --python), JOBS (parallel compiles, default 3: six at once ran out of the H100's memory), PEER=0 (no PyTorch figures),
# PEER_CONFIGS (compile_step.py's configs, default eager,compile; add compile-max for max-autotune),
# PEER_PROFILE=1 (the peer's kernels profiled after timing: kernel ms per step and gpu_busy, the share of
# a step the GPU spends in kernels, in each config's JSON line; torch.compile's lines always carry its
# graphs and graph breaks), SETS (more --set arguments for
# runx, e.g. a CPU stand-in: SETS="--set device=cpu --set data.batch_size=4").
set -uo pipefail
OUT=${OUT:-/tmp/gpu-checks}
R=${R:-./build-device/runx}
DB=$OUT/zoo.db
W=$OUT/zoo
mkdir -p "$W"
DEFAULT="resnet50 resnext50_32x4d wide_resnet50_2 densenet121 mobilenet_v2 mobilenet_v3_large efficientnet_b0
  regnet_y_1_6gf convnext_tiny vit_b_16 swin_t swin_v2_t maxvit_t shufflenet_v2_x1_0 squeezenet1_1 mnasnet1_0
  googlenet inception_v3"
what=${1:-table}; shift || true
models=${*:-$DEFAULT}
[ -f build-device/env.sh ] && source build-device/env.sh

size() { [ "$1" = inception_v3 ] && echo 299 || echo 224; }

run_peer() {  # model, then compile_step.py's run arguments: PyTorch's step of the model the experiment trains
  local m=$1 s; s=$(size "$1"); shift
  python3 tools/compile_step.py --module bench/zoo_models.py:build --builder-kwargs "{\"name\": \"$m\", \"num_classes\": 1000}" \
    --shape "3,$s,$s" --batch "${BATCH:-128}" --dtype bf16 --channels-last --no-check "$@"
}

experiment() {  # model -> its experiment file
  local m=$1 s; s=$(size "$m")
  cat > "$W/$m.yaml" <<YAML
name: zoo-$m
device: cuda
seed: 0
precision: bf16
model: {name: python, path: bench/zoo_models.py, builder: build, kwargs: {name: $m, num_classes: 1000}}
data: {source: synthetic, shape: [3, $s, $s], num_classes: 1000, batch_size: ${BATCH:-128}}
train: {optimizer: {name: sgd, lr: 0.01, momentum: 0.9}, warmup_steps: 10, steps: ${STEPS:-100}, eval: false}
optimizations: {channels_last: {}, fused_optimizer: {}, compiled_step: {package: auto}, cuda_graphs: {}}
trial_timeout_s: 900
sweep: {mode: grid, axes: {optimizations: [compiled_step, cuda_graphs]}}
YAML
  echo "$W/$m.yaml"
}

case $what in
  compile)
    running=0
    for m in $models; do
      ( f=$(experiment "$m"); $R compile "$f" --db "$DB" --python "${PYTHON:-python3}" ${SETS:-} > "$W/$m-compile.log" 2>&1
        echo "[$m compile rc=$?] $(grep -E '^  (ok|FAILED|cannot tell)|runx: error' "$W/$m-compile.log" | tail -n 2 | tr '\n' ' ')" ) &
      running=$((running + 1))
      if [ "$running" -ge "${JOBS:-3}" ]; then wait -n; running=$((running - 1)); fi
    done
    wait
    ;;
  measure)
    for m in $models; do
      f=$(experiment "$m")
      $R "$f" --db "$DB" --force ${SETS:-} > "$W/$m-runx.log" 2>&1; echo "[$m runx rc=$?]"; tail -n 8 "$W/$m-runx.log"
      [ "${PEER:-1}" = 0 ] || run_peer "$m" --configs "${PEER_CONFIGS:-eager,compile}" --measure "${STEPS:-100}" \
        ${PEER_PROFILE:+--profile-dir "$W/$m-profile"} > "$W/$m-peer.log" 2>&1
      grep '"config"' "$W/$m-peer.log" | cut -c1-200
    done
    ;;
  peer)
    for m in $models; do
      run_peer "$m" --configs "${PEER_CONFIGS:-eager,compile}" --measure "${STEPS:-100}" --profile-dir "$W/$m-profile" \
        > "$W/$m-peer-profile.log" 2>&1; echo "[$m peer rc=$?]"
      grep '"config"' "$W/$m-peer-profile.log" | python3 -c "import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print(r['config'], r['samples_per_s'], 'img/s', 'gpu_busy', r.get('gpu_busy'), 'kernel_ms', r.get('kernel_ms_per_step'),
          'ms', r['ms_per_step'], 'graphs', r.get('graphs'), 'breaks', r.get('graph_breaks'), r.get('graph_break_reasons', ''))"
    done
    ;;
  prepare)
    JOBS=${JOBS:-2} bash "$0" compile $models & JOBS=${JOBS:-2} bash "$0" warm $models; wait
    ;;
  warm)
    running=0
    for m in $models; do
      ( run_peer "$m" --configs "${WARM_CONFIGS:-compile}" --measure 1 --warmup 1 > "$W/$m-warm.log" 2>&1; echo "[$m warm rc=$?]" ) &
      running=$((running + 1))
      if [ "$running" -ge "${JOBS:-3}" ]; then wait -n; running=$((running - 1)); fi
    done
    wait
    ;;
  pack)
    n=0
    for f in "$OUT"/compiled/*.pt2; do
      [ -f "$f" ] || continue; n=$((n + 1))
      tar -C "$OUT" -czf "$OUT/compiled-zoo-$(basename "$f" .pt2).tgz" "compiled/$(basename "$f")" $(cd "$OUT" && ls "compiled/$(basename "$f")".* 2>/dev/null)
    done
    echo "packed $n packages"; ls -la "$OUT"/compiled-zoo-*.tgz 2>/dev/null
    ;;
  unpack)
    for f in .devbin/compiled-zoo-*.tgz; do [ -f "$f" ] && tar -C "$OUT" -xzf "$f"; done
    ls "$OUT"/compiled 2>/dev/null | head -50
    ;;
  table)
    echo "| model | runx eager | PyTorch eager | runx compiled_step | + cuda_graphs | torch.compile | best runx / torch.compile | max-autotune | best runx / max-autotune | package check |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    trained=0 at=0
    for m in $models; do
      row() { $R query --db "$DB" --format csv "SELECT coalesce(printf('%.0f', samples_per_s), status || ': ' ||
        replace(substr(error, 1, 80), '|', '/')) AS v FROM trial_summary WHERE experiment = 'zoo-$m' AND label = '$1'
        ORDER BY trial_id DESC LIMIT 1" 2>/dev/null | tail -n +2 | tr -d '"\r'; }
      peer() { python3 -c "import json, os
got = {}
for f in ['$W/$m-peer-profile.log', '$W/$m-peer.log']:  # measure's figure where it has one, else the peer-only run's
    for l in open(f) if os.path.exists(f) else []:
        if l.startswith('{'):
            r = json.loads(l)
            got[r['config']] = r['samples_per_s']
if '$1' in got: print(got['$1'])" 2>/dev/null; }
      e=$(row baseline) c=$(row compiled_step) g=$(row compiled_step+cuda_graphs) pe=$(peer eager) pc=$(peer compile) pm=$(peer compile-max)
      # runx's best against torch.compile and against max-autotune, and whether the first is at least
      # 1.0 before rounding (a 0.9996 printed as 1.000x does not count)
      read -r best bestm atleast < <(python3 -c "
v = [float(x) for x in '$c $g'.split() if x.replace('.', '', 1).isdigit()]
ratio = lambda p: max(v) / float(p) if v and p else None
r, m = ratio('$pc'), ratio('$pm')
print(f'{r:.3f}x' if r else '-', f'{m:.3f}x' if m else '-', int(bool(r) and r >= 1.0))" 2>/dev/null)
      check=$(grep -E '^  (ok|FAILED|cannot tell)' "$W/$m-compile.log" 2>/dev/null | tail -n 1 | sed 's/^  //' | cut -c1-60)
      echo "| $m | ${e:--} | ${pe:--} | ${c:--} | ${g:--} | ${pc:--} | ${best:--} | ${pm:--} | ${bestm:--} | ${check:--} |"
      if [ -n "$pc" ]; then  # torch.compile trains it: the model counts towards the issue's share
        trained=$((trained + 1))
        at=$((at + ${atleast:-0}))
      fi
    done
    if [ "$trained" -gt 0 ]; then
      echo "best runx >= torch.compile on $at of the $trained models torch.compile trains" \
        "($((100 * at / trained))%; a ratio below 1.0x or a runx failure counts against)"
    fi
    ;;
  *) echo "usage: bash bench/zoo.sh compile|warm|prepare|measure|peer|table|pack|unpack [MODEL...]"; exit 2 ;;
esac
