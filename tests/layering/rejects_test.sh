#!/usr/bin/env bash
# The module check (scripts/check-layers.sh) can fail: on a copy of runner/ with the project's own
# rules (BUILD/module-rules.txt), a LibTorch header put in the parent's modules is named, both
# directly (sweep/) and through a LibTorch module's header (cli/ including trial/), and nothing else is.
#   rejects_test.sh BUILD/module-rules.txt SOURCE_DIR
set -uo pipefail
rules=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$tmp/runner"
cp -r "$root/runner/src" "$root/runner/include" "$tmp/runner/"
bash "$root/scripts/check-layers.sh" "$rules" "$tmp" || fail "the unchanged copy does not pass"
printf '#include <torch/types.h>\n' > "$tmp/runner/src/sweep/bad.cc"
printf '#include "trial/trial.h"\n' > "$tmp/runner/src/cli/bad.cc"
out=$(bash "$root/scripts/check-layers.sh" "$rules" "$tmp")
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "check-layers.sh exited $rc, expected 1"
grep -qF "runner/src/sweep/bad.cc: torch-free module 'sweep' reaches LibTorch through runner/src/sweep/bad.cc" <<< "$out" \
  || fail "the torch include in sweep/ is not named"
grep -qF "runner/src/cli/bad.cc: torch-free module 'cli' includes \"trial/trial.h\" of LibTorch module 'trial'" <<< "$out" \
  || fail "cli/'s include of a LibTorch module's header is not named"
others=$(grep -v '/bad\.cc: ' <<< "$out")
[ -z "$others" ] || fail "lines about files nobody changed: $others"
echo "ok: both named, nothing else"
