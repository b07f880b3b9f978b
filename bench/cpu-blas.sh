#!/usr/bin/env bash
# The quickstart on the CPU under each BLAS Debian's LibTorch can load (the reference libblas3 and
# OpenBLAS), runx and PyTorch (bench/peers/peer_quickstart.py, Debian's python3-torch: the same LibTorch)
# side by side, alternating, REPEATS rounds. Switches the libblas.so.3 alternative (root) and puts
# it back to auto at the end. Figures: docs/benchmarks.md ("CPU: the quickstart").
#   bash bench/cpu-blas.sh [REPEATS]       (default 2; needs libblas3 and libopenblas0-openmp)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-2}
PY=${PY:-/usr/bin/python3}
ALT=libblas.so.3-x86_64-linux-gnu
LIB=/usr/lib/x86_64-linux-gnu
OUT=$(mktemp -d)
trap 'update-alternatives --quiet --auto $ALT' EXIT
for r in $(seq "$REPEATS"); do
  for b in blas openblas-openmp; do
    update-alternatives --quiet --set $ALT $LIB/$b/libblas.so.3
    echo "== round $r, $b: $(./runx doctor | grep '^BLAS' | cut -c23-90)"
    for p in fp32 bf16; do
      ./runx experiments/quickstart.yaml --db "$OUT/$b.db" --force --set precision=$p 2>&1 | grep -E '^(baseline|bf16|fp32) ' |
        awk -v p=$p '{print "runx    " p ": step ms " $3 " " $4 ", samples/s " $5}'
    done
    $PY bench/peers/peer_quickstart.py --configs fp32,bf16 | sed 's/^/pytorch /'
  done
done
