#!/usr/bin/env bash
# scripts/lib.sh's runx_build_progress on ninja's output as the wrappers see it (not a terminal):
# every line kept in the log, "[N/M]" shown at each tenth, the version stamp not counted as work.
#   build_progress_test.sh SOURCE_DIR
set -euo pipefail
source "$1/scripts/lib.sh"
tmp="$(mktemp -d /tmp/runx-progress-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A build of 20 steps after the version stamp.
{
  echo "[1/21] runx version"
  for i in $(seq 2 21); do echo "[$i/21] Building CXX object x$i.o"; done
  echo "ninja: build finished"
} >"$tmp/ninja.txt"
runx_build_progress "$tmp/log" <"$tmp/ninja.txt" 2>"$tmp/shown" || fail "a build that did work reported none"
cmp -s "$tmp/ninja.txt" "$tmp/log" || fail "the log is not the whole output"
expected="runx: building [2/21] 9%
runx: building [3/21] 14%
runx: building [5/21] 23%
runx: building [7/21] 33%
runx: building [9/21] 42%
runx: building [11/21] 52%
runx: building [13/21] 61%
runx: building [15/21] 71%
runx: building [17/21] 80%
runx: building [19/21] 90%
runx: building [21/21] 100%"
[[ "$(cat "$tmp/shown")" == "$expected" ]] || { diff <(echo "$expected") "$tmp/shown" >&2; fail "progress lines"; }

# A build with nothing to do but the version stamp: nothing shown, status 1 (the log is not kept).
if printf '[1/4] runx version\n' | runx_build_progress "$tmp/log2" 2>"$tmp/shown2"; then fail "a no-op build reported work"; fi
[[ ! -s "$tmp/shown2" ]] || fail "a no-op build showed: $(cat "$tmp/shown2")"
echo ok
