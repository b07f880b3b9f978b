#!/usr/bin/env bash
# bench/gpu-checks.sh sections that together run longer than one device call (10 minutes): started
# in the background in a process session of their own (which outlives the call that started it,
# while the machine is held), then followed by further calls until they end.
#   device tool, carry [".device"]:
#     bash bench/gpu-session.sh start 'COMMANDS'   # starts them, then follows them like `wait`, e.g.
#       start 'bash bench/gpu-checks.sh build compiled; TS_MODELS=resnet50 bash bench/gpu-checks.sh torchscript'
#     bash bench/gpu-session.sh wait [SECONDS]     # follows for up to SECONDS (default 570)
# Each call returns the progress so far: the logs and stores of gpu-checks.sh, packed into
# $OUT/gpu-checks.tgz (weights and packages left out), plus the session's own log ($OUT/session.log),
# the binaries (build-device-bin.tgz) and the compiled_step packages (compiled-*.tgz): copy those
# into .devbin/ and carry it next time (sections unpack, compiled); the COMMANDS run with OUT set
# to where those logs are kept (/tmp/gpu-checks). Issue the next `wait` call at once:
# a machine left idle is given back and the sections die with it. Give each call timeout_s 600:
# start and wait follow for 570 s (WAIT_S, or wait's argument), and a call cut short returns nothing.
# Sections that fit one call are safer run directly: a lost call then costs only itself.
set -uo pipefail
RESULTS=/tmp/gpu-checks
LOG=/tmp/gpu-session.log
cmd=${1:-wait}; shift || true

pack() {  # the logs and stores in one file; the binaries and packages each in their own (at most 16 MiB a file)
  [ -n "${OUT:-}" ] || return 0
  cp "$LOG" "$OUT/session.log" 2>/dev/null
  tar -C "$RESULTS" -czf "$OUT/gpu-checks.tgz" --exclude='*.tgz' --exclude='*.pt' --exclude='*.pt2' . 2>/dev/null
  for f in "$RESULTS"/build-device-bin.tgz "$RESULTS"/compiled-*.tgz; do [ -f "$f" ] && cp "$f" "$OUT/"; done
}

case $cmd in
  start)
    mkdir -p "$RESULTS"
    echo "started $(date +%T): $*" > "$LOG"
    OUT=$RESULTS setsid nohup bash -c "$1"'; echo "=== done rc=$? ($(date +%T))"' >> "$LOG" 2>&1 < /dev/null &
    sleep 2
    exec bash "$0" wait "${WAIT_S:-570}"
    ;;
  wait)
    limit=${1:-570}
    for ((t = 0; t < limit; t += 5)); do
      grep -q '^=== done' "$LOG" 2>/dev/null && break
      sleep 5
    done
    pack
    tail -n "${TAIL:-60}" "$LOG"
    grep -q '^=== done' "$LOG" && echo "[session: all sections ended]" || echo "[session: still running]"
    ;;
  *) echo "usage: gpu-session.sh start 'COMMANDS' | wait [SECONDS]"; exit 2 ;;
esac
