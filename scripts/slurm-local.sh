#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for trying and testing `runx submit --slurm`:
# Debian's slurm-wlm (slurmctld + slurmd) and munge, CPU only, everything (config, keys, state,
# logs, sockets) under one directory, nothing written to /etc. Needs no systemd and no cgroups.
#
#   scripts/slurm-local.sh start     start munged, slurmctld and slurmd; wait for the node to be idle
#   scripts/slurm-local.sh stop      cancel this cluster's jobs, stop the daemons (by their pid files)
#   scripts/slurm-local.sh status    the daemons, the node, the queue
#   scripts/slurm-local.sh env       the line to point SLURM's commands at it: eval "$(scripts/slurm-local.sh env)"
#
# Environment:
#   RUNX_SLURM_DIR   where everything lives (default /tmp/runx-slurm-$USER)
#   RUNX_SLURM_PORT  slurmctld's port; slurmd takes the next one (default 6817)
# Two clusters with different directories and ports can run side by side (the test suite starts
# its own). sbatch, squeue, sacct, ... find the cluster through SLURM_CONF=$RUNX_SLURM_DIR/slurm.conf.
set -euo pipefail

user="$(id -un)"
dir="${RUNX_SLURM_DIR:-/tmp/runx-slurm-$user}"
port="${RUNX_SLURM_PORT:-6817}"
conf="$dir/slurm.conf"
export SLURM_CONF="$conf"

die() { echo "slurm-local: error: $*" >&2; exit 1; }
say() { echo "slurm-local: $*" >&2; }

# pid of a daemon from its pid file, if that process is alive.
alive_pid() {
  local f="$dir/$1.pid" pid
  [[ -f "$f" ]] || return 1
  pid="$(cat "$f" 2>/dev/null)"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

need() {
  local missing=()
  for c in munged slurmctld slurmd sinfo scontrol; do command -v "$c" >/dev/null || missing+=("$c"); done
  [[ ${#missing[@]} -eq 0 ]] ||
    die "not found: ${missing[*]}; install Debian's slurm-wlm and munge (apt-get install slurm-wlm munge)"
}

write_conf() {
  local host cpus mem
  host="$(hostname -s)"
  cpus="$(nproc)"
  # What slurmd detects, less 5% for the system; at least 1 MB.
  mem="$(awk '/^MemTotal:/ {m = int($2 / 1024 * 0.95); print (m > 0 ? m : 1)}' /proc/meminfo)"
  cat >"$conf" <<EOF
# Written by scripts/slurm-local.sh: a one-node cluster on $host (CPU only).
ClusterName=runx-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No systemd and no cgroups in a container: track a job's processes through /proc, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
MinJobAge=600
InactiveLimit=0
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
  need
  if alive_pid slurmctld >/dev/null && alive_pid slurmd >/dev/null && alive_pid munged >/dev/null; then
    say "already running in $dir"
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  stop_daemons
  mkdir -p "$dir"/{munge,state,log} "$dir/spool/$(hostname -s)"
  chmod 755 "$dir/munge"  # the socket must be reachable; the key itself is 0600
  local key="$dir/munge/munge.key"
  if [[ ! -s "$key" ]]; then
    dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
    chmod 600 "$key"
  fi
  # munged refuses a key, socket or log that others could write; --force accepts running as root.
  munged --force --socket="$dir/munge/munge.socket" --key-file="$key" --pid-file="$dir/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
    || die "munged did not start (see $dir/log/munged.log)"
  write_conf
  slurmctld -f "$conf" || die "slurmctld did not start (see $dir/log/slurmctld.log)"
  slurmd -f "$conf" || die "slurmd did not start (see $dir/log/slurmd.log)"
  # Ready once the node is idle (it registers within a second or two).
  local state="" name i
  for i in $(seq 1 150); do
    state="$(sinfo -h -N -o %T 2>/dev/null | head -1 || true)"
    [[ "$state" == idle ]] && break
    # (after 2 s: a daemon writes its pid file a moment after it has forked)
    [[ $i -gt 10 ]] && for name in slurmctld slurmd; do
      alive_pid "$name" >/dev/null || {
        tail -n 5 "$dir/log/$name.log" >&2 || true
        stop_daemons
        die "$name stopped (is port $port or $((port + 1)) taken? RUNX_SLURM_PORT picks others); log: $dir/log/$name.log"
      }
    done
    sleep 0.2
  done
  if [[ "$state" != idle ]]; then
    tail -n 5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
    stop_daemons
    die "the node did not become idle within 30 s (state: '${state:-none}'); logs in $dir/log"
  fi
  say "one-node cluster up: node $(hostname -s), $(nproc) CPUs, partition 'local', in $dir"
  echo "export SLURM_CONF=$conf"
}

# Stops the daemons this script started (by their pid files): SIGTERM to all of them at once,
# then up to 5 s for each to end before SIGKILL.
stop_daemons() {
  local name pid pids=()
  for name in slurmd slurmctld munged; do
    pid="$(alive_pid "$name")" || continue
    kill "$pid" 2>/dev/null || true
    pids+=("$pid")
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  done
}

stop() {
  if [[ -f "$conf" ]] && alive_pid slurmctld >/dev/null; then
    scancel --user="$user" 2>/dev/null || true
    # Give the jobs' processes their SIGTERM (KillWait=5) before the daemons go.
    for _ in $(seq 1 35); do
      [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] && break
      sleep 0.2
    done
  fi
  stop_daemons
  say "stopped (state kept in $dir)"
}

status() {
  local name pid up=1
  for name in munged slurmctld slurmd; do
    if pid="$(alive_pid "$name")"; then echo "$name: running (pid $pid)"; else echo "$name: not running"; up=0; fi
  done
  if [[ "$up" == 1 ]]; then
    echo "SLURM_CONF=$conf"
    sinfo -N -o "%N %T %c %m %P"
    squeue
  fi
  [[ "$up" == 1 ]]
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac
