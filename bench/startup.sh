#!/usr/bin/env bash
# How long runx takes to start the commands that need no LibTorch (issue 32): `--version`, `query`,
# `history` and `compare` on a small store, each run N times, the median and the fastest in ms.
# Given several binaries, they run side by side, interleaved (one call of each in turn), so that
# the machine's load falls on them alike; the last column is each binary's median over the first's.
#   bash bench/startup.sh [N=30] RUNX [RUNX...]     e.g. a copy of an older build beside build/runx:
#   bash bench/startup.sh 30 /tmp/runx-before/runx build/runx
# The store is made with the last binary given (two runs of a 2-step MLP on synthetic data).
set -euo pipefail
N=${1:-30}; shift
[ $# -gt 0 ] || { echo "usage: bash bench/startup.sh [N] RUNX [RUNX...]" >&2; exit 2; }
bins=("$@")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cat > "$W/tiny.yaml" <<YAML
name: startup-tiny
device: cpu
seed: 0
model: {name: mlp, hidden: [8]}
data: {source: synthetic, shape: [1, 4, 4], num_classes: 3, batch_size: 4}
train: {optimizer: {name: sgd, lr: 0.01}, warmup_steps: 1, steps: 2, eval: false}
YAML
maker=${bins[-1]}
"$maker" "$W/tiny.yaml" --db "$W/s.db" --tag one >/dev/null 2>&1
"$maker" "$W/tiny.yaml" --db "$W/s.db" --tag two --force >/dev/null 2>&1
one() {  # binary, command
  case $2 in
    version) "$1" --version ;;
    query) "$1" query --db "$W/s.db" "SELECT count(*) FROM trial_summary" ;;
    history) "$1" history --db "$W/s.db" ;;
    compare) "$1" compare --db "$W/s.db" one two ;;
  esac
}
for b in "${bins[@]}"; do  # each command must work with each binary: timing an error's exit is no figure
  for c in version query history compare; do
    one "$b" "$c" >/dev/null 2>"$W/err" || { echo "$b $c failed:"; cat "$W/err"; exit 1; }
  done
done
ms() { local t0 t1; t0=$(date +%s%N); one "$1" "$2" >/dev/null 2>&1 || true; t1=$(date +%s%N); echo $(((t1 - t0) / 1000)); }
printf '%-9s %-40s %10s %10s %8s\n' command binary "median ms" "min ms" "/ first"
for c in version query history compare; do
  for b in "${bins[@]}"; do : > "$W/$c.$(echo "$b" | md5sum | cut -c1-8)"; done
  for ((i = 0; i < N; i++)); do
    for b in "${bins[@]}"; do
      ms "$b" "$c" >> "$W/$c.$(echo "$b" | md5sum | cut -c1-8)"
    done
  done
  first=
  for b in "${bins[@]}"; do
    read -r med min < <(sort -n "$W/$c.$(echo "$b" | md5sum | cut -c1-8)" | awk '{v[NR] = $1} END {
      m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f %.1f\n", m / 1000, v[1] / 1000 }')
    [ -n "$first" ] || first=$med
    printf '%-9s %-40s %10s %10s %8s\n' "$c" "$b" "$med" "$min" "$(awk -v a="$med" -v b="$first" 'BEGIN {printf "%.3f", a / b}')"
  done
done
