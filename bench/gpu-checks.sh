#!/usr/bin/env bash
# The GPU machine's share of the checks and figures in docs/benchmarks.md, one section per argument:
#   bash ../shared/device/prepare.sh && cp /var/cache/apt/archives/{dataset-fashion-mnist,fortunes}_*.deb .device/debs/
#   device tool, carry [".device"]:  bash bench/gpu-checks.sh build infer resnet export auto throughput memmap torchscript aoti gpt dp1 step compiled compiled-batch compiled-gpt tests
#   (dp1: data_parallel's world-size-1 overhead on one GPU; dp: its scaling over several GPUs against DDP)
# Builds runx there (scripts/device-build-targets.sh), then writes each section's log, and the
# results stores, under $OUT (default /tmp/gpu-checks). Prints the tail of each log.
set -uo pipefail
OUT=${OUT:-/tmp/gpu-checks}
mkdir -p "$OUT"
R=./build-device/runx
DB="$OUT/gpu.db"
section() { echo; echo "=== $1 ($(date +%T))"; }
source "$(dirname "${BASH_SOURCE[0]}")/checks-lib.sh"  # log

install_fortunes() {  # the text the gpt benchmarks read: the installed package, else its .deb from .device/debs
  FORTUNES=/usr/share/games/fortunes
  if [ ! -d "$FORTUNES" ] && ls .device/debs/fortunes_*.deb >/dev/null 2>&1; then
    mkdir -p /tmp/fortunes && dpkg -x .device/debs/fortunes_*.deb /tmp/fortunes &&
      mkdir -p /usr/share/games && ln -sfn /tmp/fortunes/usr/share/games/fortunes "$FORTUNES" ||
      echo "fortunes could not be installed: the text tests will skip"
  fi
}

reuse_packages() {  # compiled_step packages an earlier session made and brought back (.devbin/compiled-*.tgz, carried)
  mkdir -p build-device/compiled
  for f in .devbin/compiled-*.tgz; do [ -f "$f" ] && tar -C build-device -xzf "$f" && echo "reused packages: $f"; done
}
keep_packages() {  # prefix: those packages back under $OUT (one file, at most 16 MiB, to carry next time)
  ( cd build-device && ls compiled/$1-*.pt2 compiled/$1-*.pt2.json >/dev/null 2>&1 &&
    tar -czf "$OUT/compiled-$1.tgz" compiled/$1-*.pt2 compiled/$1-*.pt2.json ) || true
}

sources_digest() {  # what the binaries are built from: the C++ sources and the build files
  find runner plugins cmake bench/studies/compiled_step_probe.cc CMakeLists.txt scripts/device-build-targets.sh -type f |
    LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16
}
tests_digest() {  # what runx_unit_test is built from besides those: its tests and test plugins
  find tests/unit tests/plugins tests/data -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16
}
build() {
  TARGETS="${BUILD_TARGETS:-runx-app runx_integration_test runx_unit_test}" bash scripts/device-build-targets.sh || return 1
  sources_digest > build-device/sources.digest; tests_digest > build-device/tests.digest
  # The binaries come back too: a later call on a fresh machine unpacks them (section unpack)
  # instead of building again. Copy $OUT/build-device-{bin,test}.tgz into .devbin/ here, carry .devbin.
  # Two files: one file comes back only under 16 MiB, and runx_unit_test alone is 7 MB.
  tar -czf "$OUT/build-device-bin.tgz" --exclude='*.o' build-device/runx build-device/runx-worker build-device/plugins build-device/env.sh \
    build-device/sources.digest $(find build-device -maxdepth 1 \( -name '*.so*' -o -name runx_compiled_step_probe \))
  if [ -x build-device/runx_unit_test ]; then
    tar -czf "$OUT/build-device-test.tgz" build-device/runx_unit_test build-device/tests.digest \
      $(find build-device/tests/plugins -name '*.so' 2>/dev/null)
  fi
  ls -la "$OUT"/build-device-*.tgz
}

for what in "$@"; do
  case $what in
    build)
      section build; build || exit 1
      ;;
    unpack)  # the binaries an earlier call built (section build), on a fresh machine: no build, unless stale
      section unpack
      if [ ! -x build-device/runx ]; then
        mkdir -p /tmp/deps && for f in .device/debs/*.deb; do dpkg -x "$f" /tmp/deps; done && touch /tmp/deps/.done
        tar -xzf .devbin/build-device-bin.tgz || exit 1
        [ -f .devbin/build-device-test.tgz ] && tar -xzf .devbin/build-device-test.tgz
        echo "export RUNX_PLUGIN_DIR=$PWD/build-device/plugins" >> build-device/env.sh
        built=$(cat build-device/sources.digest 2>/dev/null || echo none) tree=$(sources_digest)
        if [ "$built" != "$tree" ]; then
          echo "the binaries in .devbin were built from other sources (digest $built, this tree's $tree): building"
          rm -rf build-device && { BUILD_TARGETS=${BUILD_TARGETS:-runx-app} build || exit 1; }  # what the checks run
        elif [ -x build-device/runx_unit_test ] && [ "$(cat build-device/tests.digest 2>/dev/null)" != "$(tests_digest)" ]; then
          echo "runx_unit_test was built from other tests: removed (section build makes it)"; rm -f build-device/runx_unit_test
        fi
      fi
      ls -la build-device/runx
      ;;
    infer)  # cuda_graphs for inference on a launch-bound model, and PyTorch's figure
      section infer; source build-device/env.sh
      log cuda-graphs-infer $R bench/experiments/cuda-graphs-infer.yaml --db "$DB"
      log peer-mlp python3 bench/peers/peer_infer.py --model mlp --batch 1 --steps 1000 --warmup 50 --configs fp32,fp32+graph
      ;;
    resnet)  # ResNet-50 inference latency at batch 1, and PyTorch's figures
      section resnet; source build-device/env.sh
      log resnet50-inference $R experiments/resnet50-inference.yaml --db "$DB"
      log peer-resnet50 python3 bench/peers/peer_infer.py --model resnet50 --batch 1 --steps 300 --warmup 20 \
        --configs fp32,bf16,fp32+cl,bf16+cl,bf16+cl+graph,bf16+cl+compile
      ;;
    export)  # a TorchScript model trained on the GPU, exported, measured with task: infer, loaded in Python
      section export; source build-device/env.sh
      cat > "$OUT/make_net.py" <<'PY'
import sys, torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.fc1 = torch.nn.Linear(64, 128); self.fc2 = torch.nn.Linear(128, 10)
    def forward(self, x): return self.fc2(torch.relu(self.fc1(x)))
torch.manual_seed(0); torch.jit.save(torch.jit.script(Net()), sys.argv[1])
PY
      python3 "$OUT/make_net.py" "$OUT/net.pt"   # from a file: torch.jit.script reads the class's source
      cat > "$OUT/export-train.yaml" <<YAML
name: gpu-export
device: cuda
model: {name: torchscript, path: $OUT/net.pt}
data: {source: synthetic, shape: [64], num_classes: 10, batch_size: 128}
train: {warmup_steps: 2, steps: 50, eval: false}
optimizations: [export]
YAML
      RUNX_ARTIFACT_DIR="$OUT/artifacts" log export-train $R "$OUT/export-train.yaml" --db "$DB" --force
      frozen=$(find "$OUT/artifacts" -name model.frozen.pt | head -1)
      cat > "$OUT/export-infer.yaml" <<YAML
name: gpu-export-infer
task: infer
device: cuda
model: {name: torchscript, path: $frozen}
data: {source: synthetic, shape: [64], num_classes: 10, batch_size: 1}
infer: {warmup_steps: 5, steps: 100, eval: false}
optimizations: {cuda_graphs: {}}
YAML
      log export-infer $R "$OUT/export-infer.yaml" --db "$DB" --force
      log export-python python3 -c "
import sys, torch
m = torch.jit.load('$frozen'); t = torch.jit.load('$OUT/net.pt').cuda()
x = torch.randn(4, 64, device='cuda')
y, y0 = m(x), t(x)
print('frozen on', y.device, 'output', tuple(y.shape), 'differs from the untrained net by', (y - y0).abs().max().item())"
      ;;
    auto)  # auto_batch against the CUDA allocator, whole GPU and a quarter of it (memory fraction)
      section auto; source build-device/env.sh
      log auto-batch $R bench/experiments/auto-batch-resnet50.yaml --db "$DB" --force
      log auto-batch-quarter $R bench/experiments/auto-batch-resnet50.yaml --db "$DB" --force --set optimizations.memory.fraction=0.25
      ;;
    throughput)  # auto_batch's throughput objective, and ResNet-50 inference in the throughput regime
      section throughput; source build-device/env.sh
      log auto-batch-throughput $R bench/experiments/auto-batch-resnet50.yaml --db "$DB" --force \
        --set optimizations.auto_batch.objective=throughput --set optimizations.auto_batch.max=4096
      log resnet50-inference-b64 $R experiments/resnet50-inference.yaml --db "$DB" --force \
        --set data.batch_size=64 --set infer.steps=100 --set repeats=1
      log peer-resnet50-b64 python3 bench/peers/peer_infer.py --model resnet50 --batch 64 --steps 100 --warmup 20 \
        --configs fp32,bf16,fp32+cl,bf16+cl,bf16+cl+graph
      ;;
    memmap)  # memmap data through pinned, non-blocking copies; default loader vs prefetch
      section memmap; source build-device/env.sh
      log pack $R data pack bench/experiments/memmap-prefetch-data.yaml --count 8192 --out /tmp/runx-pack
      log memmap-prefetch $R bench/experiments/memmap-prefetch.yaml --db "$DB" --force
      ;;
    torchscript)  # torchvision models as TorchScript files, trained by runx and by PyTorch eager
      section torchscript; source build-device/env.sh
      TS=${TS_DIR:-/tmp/ts}; MODELS=${TS_MODELS:-vit_b_16 convnext_tiny mobilenet_v3_large resnet50}
      log ts-export python3 bench/peers/peer_torchscript.py --export "$TS" --models "$(echo $MODELS | tr ' ' ,)"
      # TS_BF16=1: bf16 and bf16 + channels_last only, on both sides
      ts_set=(); ts_configs=fp32,bf16,fp32+cl,bf16+cl
      [ -n "${TS_BF16:-}" ] && ts_set=(--set precision=bf16 --set 'sweep.axes={optimizations: [channels_last]}') && ts_configs=bf16,bf16+cl
      log ts-peer python3 bench/peers/peer_torchscript.py --models "$(echo $MODELS | tr ' ' ,)" --configs "$ts_configs"
      for m in $MODELS; do
        log "ts-$m" $R bench/experiments/torchscript-models.yaml --db "$DB" --force --set model.path="$TS/$m.pt" \
          --set repeats="${TS_REPEATS:-1}" "${ts_set[@]}"
      done
      for m in ${TS_EXECUTOR_MODELS-vit_b_16 convnext_tiny}; do  # TS_EXECUTOR_MODELS= skips this
        log "ts-executor-$m" $R bench/experiments/torchscript-executor.yaml --db "$DB" --force --set model.path="$TS/$m.pt" \
          --set repeats="${TS_REPEATS:-1}"
      done
      # cuda_graphs on a traced attention model: captured, or refused before the first step with its reason
      log ts-graphs $R bench/experiments/torchscript-models.yaml --db "$DB" --force --set model.path="$TS/vit_b_16.pt" \
        --set precision=bf16 --set 'optimizations=[cuda_graphs]' --set sweep.axes.optimizations=[channels_last] \
        --set sweep.axes.precision=[bf16] --set repeats=1
      $R query --db "$DB" "SELECT t.label, t.status, round(s.step_ms_median, 2) AS ms, t.error, substr(t.error_detail, 1, 600) AS detail,
        (SELECT group_concat(m.name || '=' || m.value, ' ') FROM metrics m WHERE m.trial_id = t.id AND m.name LIKE 'cuda_graphs.%') AS graphs
        FROM trials t JOIN trial_summary s ON s.trial_id = t.id WHERE t.run_id = (SELECT max(id) FROM runs)" > "$OUT/ts-graphs-status.log" 2>&1
      cat "$OUT/ts-graphs-status.log"
      ;;
    aoti)  # AOTInductor packages run by runx (model: aoti) against torch.compile in Python, same call
      section aoti; source build-device/env.sh
      P=${AOTI_DIR:-build-device/pt2}; mkdir -p "$P"
      # name model batch dtype [channels-last]
      for spec in ${AOTI_SPECS:-rn50-b1:resnet50:1:fp32 rn50-b64:resnet50:64:fp32 rn50-b64-bf16cl:resnet50:64:bf16:cl vit-b64-bf16:vit_b_16:64:bf16}; do
        IFS=: read -r name model batch dtype cl <<< "$spec"
        extra=(); [ "$cl" = cl ] && extra=(--channels-last)
        [ -f "$P/$name.pt2" ] || log "aoti-pkg-$name" python3 tools/aoti_package.py --model "$model" --batch "$batch" \
          --dtype "$dtype" "${extra[@]}" -o "$P/$name.pt2"
        log "aoti-$name" $R bench/experiments/aoti-infer.yaml --db "$DB" --force --set model.path="$P/$name.pt2" \
          --set data.batch_size="$batch" --set name="aoti-$name" --export-markdown "$OUT/aoti-$name.md"
        if [ "$model" = resnet50 ]; then  # runx's own ResNet-50 (eager LibTorch), same batch and precision
          amp=(); [ "$dtype" = bf16 ] && amp=(--set precision=bf16)
          [ "$cl" = cl ] && amp+=(--set 'optimizations=[channels_last]')
          log "aoti-runx-eager-$name" $R bench/experiments/aoti-infer.yaml --db "$DB" --force --set 'model={name: resnet50}' \
            --set data.batch_size="$batch" --set name="aoti-runx-eager-$name" "${amp[@]}"
        fi
        # aoti-py (the package loaded in Python) segfaults in aoti_load_package on PyTorch 2.11: left out by default
        log "aoti-peer-$name" python3 bench/peers/peer_aoti.py --model "$model" --batch "$batch" --dtype "$dtype" \
          "${extra[@]}" --package "$P/$name.pt2" --configs "${AOTI_PEER_CONFIGS:-eager,compile,compile-ro}"
      done
      ;;
    gpt)  # the language model on real text: runx's bf16 x fused AdamW x CUDA graphs x compiled step against PyTorch
          # eager and compile (the two packages: about 100 s of compile each, once; carried back as compiled-gpt.tgz)
      section gpt; source build-device/env.sh; install_fortunes
      export RUNX_COMPILED_DIR=build-device/compiled; reuse_packages
      log gpt-pkg $R compile experiments/gpt-text-gpu.yaml --db "$DB" --set data.path="$FORTUNES"
      keep_packages gpt
      log gpt-runx $R experiments/gpt-text-gpu.yaml --db "$DB" --force --set data.path="$FORTUNES" \
        --set repeats="${GPT_REPEATS:-2}" --export-markdown "$OUT/gpt-runx.md"
      log gpt-peer python3 bench/peers/peer_gpt.py --text "$FORTUNES" \
        --configs "${GPT_PEER_CONFIGS:-fp32,fp32+fused,bf16,bf16+fused,bf16+fused+compile,bf16+fused+compile-ro}"
      log gpt-techniques $R bench/experiments/gpt-techniques.yaml --db "$DB" --force --set data.path="$FORTUNES"
      $R query --db "$DB" "SELECT t.label, t.status, t.error FROM trials t WHERE t.run_id = (SELECT max(id) FROM runs)" \
        > "$OUT/gpt-techniques-status.log" 2>&1
      $R query --db "$DB" "SELECT t.label, m.name, round(m.value, 4) AS value FROM metrics m JOIN trials t ON t.id = m.trial_id
        WHERE t.run_id = (SELECT max(id) FROM runs) AND m.step IS NULL AND (m.name LIKE 'amp.%' OR m.name LIKE 'auto_batch.%'
        OR m.name LIKE 'anomaly.%' OR m.name LIKE 'cuda_graphs.%' OR m.name IN ('val_loss', 'tokens_per_s'))" \
        > "$OUT/gpt-techniques-metrics.log" 2>&1
      cat "$OUT/gpt-techniques-status.log" "$OUT/gpt-techniques-metrics.log"
      ;;
    dp1)  # data_parallel at world size 1 over NCCL against the same trial without it: the overhead (< 2%)
      section dp1; source build-device/env.sh
      log dp1-doctor $R doctor
      log dp1-overhead $R bench/experiments/data-parallel-overhead.yaml --db "$DB" --force --export-markdown "$OUT/dp1.md"
      $R query --db "$DB" "SELECT label, status, round(samples_per_s, 1) AS samples_per_s, round(speedup, 4) AS speedup
        FROM speedups WHERE run_id = (SELECT max(id) FROM runs) ORDER BY trial_id" > "$OUT/dp1-trials.log" 2>&1
      cat "$OUT/dp1-trials.log"
      ;;
    dp)  # ResNet-50 bf16 scaling over 1, 2, 4, 8 GPUs: runx data_parallel against PyTorch DDP (multi-GPU machines)
      section dp; source build-device/env.sh
      RUNX=$R OUT="$OUT/dp" TAIL=12 log dp-scaling bash bench/data-parallel.sh
      ;;
    step)  # issue 13: a whole training step (forward+backward) compiled by AOTInductor, run from C++ by the probe,
           # against PyTorch eager, torch.compile and the joint graph compiled in Python, in the same call
      section step; source build-device/env.sh
      P=${STEP_DIR:-build-device/pt2}; mkdir -p "$P"
      # name model batch dtype [channels-last]
      for spec in ${STEP_SPECS:-rn18-b32:resnet18:32:fp32 rn50-b256-bf16cl:resnet50:256:bf16:cl}; do
        IFS=: read -r name model batch dtype cl <<< "$spec"
        extra=(); [ "$cl" = cl ] && extra=(--channels-last)
        log "step-pkg-$name" python3 tools/compile_step.py --model "$model" --batch "$batch" --dtype "$dtype" \
          "${extra[@]}" -o "$P/$name.pt2" ${STEP_PROFILE:+--profile-dir "$OUT/prof-$name"} ${STEP_PKG_ARGS:-} --measure "${STEP_MEASURE:-50}" --configs "${STEP_CONFIGS:-eager,compile,joint-compile}"
        [ -n "${STEP_PROFILE:-}" ] && export PROBE_PROFILE="$OUT/prof-$name/cxx.json"
        [ -f "$P/$name.pt2" ] && log "step-cxx-$name" ./build-device/runx_compiled_step_probe "$P/$name.pt2" "${STEP_MEASURE:-50}"
        [ -n "${STEP_PROFILE:-}" ] && for c in $(echo "${STEP_CONFIGS:-eager,compile,joint-compile}" | tr , ' '); do
            TAIL=40 log "step-diff-$name-$c" python3 bench/studies/kernel_diff.py "$OUT/prof-$name/$c.json" "$OUT/prof-$name/cxx.json"; done
        [ -n "${STEP_PROFILE:-}" ] && [ -f "$P/$name.pt2" ] && python3 -c 'import sys, zipfile, os
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist():
    if n.endswith((".cpp", ".h", ".json")) and z.getinfo(n).file_size < 20 << 20:
        open(os.path.join(sys.argv[2], os.path.basename(n)), "wb").write(z.read(n)); print(n)' "$P/$name.pt2" "$OUT/prof-$name"
        cp "$P/$name.pt2.json" "$OUT/" 2>/dev/null
        [ -d "$OUT/prof-$name" ] && tar -C "$OUT" -czf "$OUT/prof-$name.tgz" "prof-$name" && rm -rf "$OUT/prof-$name"
      done
      ;;
    compiled)  # issue 13: the compiled_step technique in runx against runx's eager step and PyTorch eager /
               # torch.compile, same call; then section compiled-check (correctness)
      section compiled; source build-device/env.sh
      # package: auto keeps packages beside the store; here in the work tree, not under $OUT (9.5 MiB each)
      export RUNX_COMPILED_DIR=build-device/compiled; reuse_packages
      log compiled-pkg $R compile experiments/compiled-step-resnet50.yaml --db "$DB"
      cp "$RUNX_COMPILED_DIR"/resnet50-*.json "$OUT/" 2>/dev/null; keep_packages resnet50-b256
      TAIL=20 log compiled-runx $R experiments/compiled-step-resnet50.yaml --db "$DB"
      log compiled-peer python3 tools/compile_step.py --model resnet50 --batch 256 --dtype bf16 --channels-last \
        --no-check --measure 40 --warmup 12 --configs eager,compile
      TAIL=40 log compiled-query $R query --db "$DB" "SELECT label, status, round(step_ms_median, 2) AS ms,
        round(samples_per_s) AS img_s, round(final_loss, 4) AS loss, substr(error, 1, 400) AS error FROM trial_summary
        WHERE experiment = 'compiled-step-resnet50' ORDER BY trial_id"
      TAIL=60 log compiled-losses $R query --db "$DB" "SELECT a.phase, a.step, a.loss AS eager, b.loss AS compiled,
        round(abs(a.loss - b.loss) / abs(a.loss), 5) AS rel FROM steps a JOIN steps b ON a.phase = b.phase AND a.step = b.step
        WHERE a.trial_id = (SELECT min(trial_id) FROM trial_summary WHERE label = 'baseline' AND experiment = 'compiled-step-resnet50')
          AND b.trial_id = (SELECT min(trial_id) FROM trial_summary WHERE label = 'compiled_step' AND experiment = 'compiled-step-resnet50')
        ORDER BY a.phase DESC, a.step"
      ;&  # on to the correctness check
    compiled-check)  # issue 13's correctness (bench/compiled-correctness.sh): eager against compiled in bf16
                     # (the speed run's settings), bf16 deterministic and fp32 deterministic, 1 and 20 steps, losses
                     # and weights; COMPILED_SETTINGS to choose; COMPILED_TRAJECTORY=1 adds PyTorch's own
                     # eager-vs-torch.compile trajectory at lr 0.1 (about 3 minutes)
      section compiled-check; source build-device/env.sh
      export RUNX_COMPILED_DIR=build-device/compiled; reuse_packages
      R=$R DB=$DB OUT=$OUT bash bench/compiled-correctness.sh ${COMPILED_SETTINGS:-} 2>&1 | tee "$OUT/compiled-correctness.log" |
        grep -E '^(===|\[|verdict|against the update|floor|run |baseline|compiled_step)'
      keep_packages resnet50-b256; keep_packages resnet50-b64
      [ -n "${COMPILED_TRAJECTORY:-}" ] && TAIL=36 log compiled-trajectory-peer python3 tools/compile_step.py --model resnet50 \
        --batch 256 --dtype bf16 --channels-last --no-check --measure 0 --trajectory 20 --trajectory-lr 0.1
      ;;
    compiled-batch)  # how far from MLPerf's ~7.9k img/s: the compiled step + foreach SGD + CUDA graphs at larger
                     # batches (one package each, ~3 min of compile each), torch.compile at the same batches
      section compiled-batch; source build-device/env.sh
      export RUNX_COMPILED_DIR=build-device/compiled; reuse_packages
      B=${COMPILED_BATCHES:-256 384 512}; axes="sweep.axes={data.batch_size: [$(echo $B | tr ' ' ,)]}"
      log compiled-batch-pkg $R compile bench/experiments/compiled-step-batches.yaml --db "$DB" --set "$axes"
      TAIL=12 log compiled-batch-runx $R bench/experiments/compiled-step-batches.yaml --db "$DB" --set "$axes"
      for b in $B; do
        TAIL=3 log "compiled-batch-peer-$b" python3 tools/compile_step.py --model resnet50 --batch "$b" --dtype bf16 \
          --channels-last --no-check --measure 40 --warmup 12 --configs compile
      done
      ;;
    compiled-gpt)  # issue 13 on the language model: runx's gpt with the compiled step against PyTorch eager and
                   # torch.compile (bench/peers/peer_gpt.py) on the same text and batch, same call
      section compiled-gpt; source build-device/env.sh; install_fortunes
      export RUNX_COMPILED_DIR=build-device/compiled; reuse_packages
      log compiled-gpt-pkg $R compile bench/experiments/compiled-step-gpt.yaml --db "$DB" --set data.path="$FORTUNES"
      cp "$RUNX_COMPILED_DIR"/gpt-*.json "$OUT/" 2>/dev/null; keep_packages gpt
      TAIL=20 log compiled-gpt-runx $R bench/experiments/compiled-step-gpt.yaml --db "$DB" --set data.path="$FORTUNES"
      log compiled-gpt-peer python3 bench/peers/peer_gpt.py --text "$FORTUNES" --configs bf16+fused,bf16+fused+compile,bf16+fused+compile-ro
      TAIL=20 log compiled-gpt-query $R query --db "$DB" "SELECT label, status, round(step_ms_median, 2) AS ms,
        round(samples_per_s * 256) AS tokens_s, round(final_loss, 4) AS loss, substr(error, 1, 300) AS error FROM trial_summary
        WHERE experiment = 'compiled-step-gpt' ORDER BY trial_id"
      ;;
    tests)
      section tests; source build-device/env.sh; install_fortunes
      if [ ! -d /usr/share/datasets/fashion-mnist ] && ls .device/debs/dataset-fashion-mnist_*.deb >/dev/null 2>&1; then
        mkdir -p /tmp/fmnist && dpkg -x .device/debs/dataset-fashion-mnist_*.deb /tmp/fmnist &&
          mkdir -p /usr/share/datasets && ln -sfn /tmp/fmnist/usr/share/datasets/fashion-mnist /usr/share/datasets/fashion-mnist ||
          echo "fashion-mnist could not be installed: its tests will fail"
      fi
      # a test binary the build left out (BUILD_TARGETS) is skipped
      [ -x build-device/runx_unit_test ] &&
        TAIL=15 log unit ./build-device/runx_unit_test --gtest_brief=1 ${UNIT_FILTER:+--gtest_filter=$UNIT_FILTER}
      [ -x build-device/runx_integration_test ] &&
        TAIL=40 log integration ./build-device/runx_integration_test --gtest_brief=1 ${INTEGRATION_FILTER:+--gtest_filter=$INTEGRATION_FILTER}
      ;;
    *) echo "unknown section '$what'"; exit 2 ;;
  esac
done
