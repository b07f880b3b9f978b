#!/usr/bin/env bash
# `cmake --install` of this build into a temporary prefix, then the installed runx used from a
# folder outside the source tree, with no RUNX_* variable: it must find its plugins, their schemas
# and its shipped files under the prefix (base/install_dirs.h), not in the build or source tree.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
source_dir="$2"
tmp="$(mktemp -d /tmp/runx-install-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RUNX_PLUGIN_DIR RUNX_PLUGIN_PATH RUNX_JAVASCRIPT_DIR

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "cmake --install"; }
runx="$prefix/bin/runx"
[[ -x "$runx" ]] || fail "no $runx"
# runx hands the commands that run LibTorch (run, plugins, ...) to the worker beside it.
[[ -x "$prefix/bin/runx-worker" ]] || fail "no $prefix/bin/runx-worker"
for f in lib/runx/plugins/libamp.so lib/runx/plugins/amp.schema.json lib/runx/plugins/libchannels_last.so \
         share/runx/tools/compile_step.py share/runx/tools/gpt_model.py share/runx/tools/aoti_package.py \
         share/runx/experiments/quickstart.yaml; do
  [[ -f "$prefix/$f" ]] || fail "not installed: $f"
done
# The test plugins of the suite are never installed.
if ls "$prefix"/lib/runx/plugins/libtest_* >/dev/null 2>&1; then fail "test plugins installed"; fi

mkdir "$tmp/work"
cd "$tmp/work"
cp "$prefix/share/runx/experiments/quickstart.yaml" .
# The plugins listed are the installed ones, from the prefix.
"$runx" plugins >plugins.txt 2>&1 || { cat plugins.txt >&2; fail "runx plugins"; }
grep -q "$prefix/lib/runx/plugins" plugins.txt || { cat plugins.txt >&2; fail "runx plugins does not name $prefix/lib/runx/plugins"; }
if grep -q "$build" plugins.txt; then cat plugins.txt >&2; fail "runx plugins names the build tree"; fi
grep -qw amp plugins.txt || { cat plugins.txt >&2; fail "runx plugins lists no amp"; }

# The quickstart, shrunk (2,000 training images), with a technique whose schema and plugin come
# from the prefix; trials run in child processes of the installed binary.
"$runx" quickstart.yaml --db "$tmp/work/r.db" --set data.train_limit=2000 --set 'optimizations={channels_last: {}}' \
  >run.txt 2>&1 || { cat run.txt >&2; fail "runx quickstart.yaml"; }
"$runx" query --db "$tmp/work/r.db" --format csv "SELECT status FROM trial_summary" >status.txt 2>&1 \
  || { cat status.txt >&2; fail "runx query"; }
[[ "$(sed 1d status.txt | tr -d '\r')" == ok ]] || { cat run.txt status.txt >&2; fail "the trial is not ok"; }

# A python model whose TorchScript file is not made yet: its trial is refused with the command that
# makes it, which names the installed tools/compile_step.py (not one relative to where the user is).
printf 'from torch import nn\n\ndef build(num_classes=10):\n    return nn.Sequential(nn.Flatten(), nn.Linear(12, num_classes))\n' >model.py
printf 'name: py\ndevice: cpu\nmodel: {name: python, path: model.py, builder: build}\n%s\n%s\n' \
  'data: {source: synthetic, shape: [3, 2, 2], num_classes: 10, batch_size: 4}' \
  'train: {warmup_steps: 1, steps: 2, eval: false}' >py.yaml
"$runx" py.yaml --db "$tmp/work/p.db" >refused.txt 2>&1 || true
"$runx" query --db "$tmp/work/p.db" --format csv "SELECT error FROM trials" >refusal.txt 2>&1 || { cat refused.txt refusal.txt >&2; fail "runx query p.db"; }
grep -qF "or: python3 $(realpath "$prefix")/share/runx/tools/compile_step.py --module " refusal.txt \
  || { cat refused.txt refusal.txt >&2; fail "the refusal does not name the installed tools/compile_step.py"; }

# runx compile runs the installed tools/compile_step.py (a python model's TorchScript file, made by
# Debian's torch where it is there), and that script finds gpt_model.py beside it.
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  "$runx" compile py.yaml --db "$tmp/work/c.db" --python /usr/bin/python3 >compile.txt 2>&1 \
    || { cat compile.txt >&2; fail "runx compile py.yaml"; }
  grep -qF "compile: /usr/bin/python3 $(realpath "$prefix")/share/runx/tools/compile_step.py --module " compile.txt \
    || { cat compile.txt >&2; fail "runx compile did not run the installed tools/compile_step.py"; }
  /usr/bin/python3 "$prefix/share/runx/tools/compile_step.py" --model gpt --n-layer 1 --print-parameters >gpt.txt 2>&1 \
    || { cat gpt.txt >&2; fail "the installed compile_step.py --model gpt --print-parameters"; }
  grep -q '"block0.qkv.weight"' gpt.txt || { cat gpt.txt >&2; fail "no block0.qkv.weight in gpt's parameters"; }
fi

# The bash completion and the man page: installed, what the installed runx makes, and usable.
completion="$prefix/share/bash-completion/completions/runx"
"$runx" completion bash >completion.txt || fail "runx completion bash"
cmp -s completion.txt "$completion" || fail "bash completion not installed as runx makes it: $completion"
bash -n "$completion" || fail "the installed bash completion is not valid bash"
"$runx" man >man.txt || fail "runx man"
cmp -s man.txt "$prefix/share/man/man1/runx.1" || fail "man page not installed as runx makes it"
grep -q '^\.TH RUNX 1' "$prefix/share/man/man1/runx.1" || fail "the man page has no .TH RUNX 1"
echo "ok: installed into $prefix; runx plugins, the quickstart and runx compile ran from $tmp/work"
