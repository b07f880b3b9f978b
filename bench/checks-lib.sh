# Shared by bench/gpu-checks.sh and bench/compiled-correctness.sh (sourced): one logged step.
# log NAME CMD...: runs CMD with its output in $OUT/NAME.log, prints its exit status and the log's
# last $TAIL lines (30), and returns the status.
log() { local name=$1; shift; "$@" > "$OUT/$name.log" 2>&1; local rc=$?; echo "[$name rc=$rc]"; tail -n "${TAIL:-30}" "$OUT/$name.log"; return $rc; }
