#!/usr/bin/env bash
# The first contact of a new user, measured: a fresh minimal Debian 12 (bookworm) root made with
# debootstrap, a clean `git clone` of this repository in it, and in a chroot there
# `./runx experiments/quickstart.yaml` (then, with --test, `./scripts/test`), each timed, with the
# packages and the disk each step added and the system services the packages enabled.
#
#   sudo scripts/fresh-debian.sh                 the quickstart only
#   sudo scripts/fresh-debian.sh --test          then the test suite too
# Options: --dir DIR (the root; default /var/tmp/runx-fresh-debian, made anew), --mirror URL
# (default http://deb.debian.org/debian), --keep (leave the root; it is removed otherwise).
# The summary goes to stdout and to DIR.summary; each step's output to DIR.<step>.log.
# Needs root (debootstrap, chroot, mounts). Run it at low priority where it shares the machine:
#   nice -n 19 scripts/fresh-debian.sh --test
# (Edit this file by writing a new one and renaming it over: bash reads a running script as it goes.)
set -euo pipefail

root=/var/tmp/runx-fresh-debian
mirror=http://deb.debian.org/debian
run_tests=0
keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) root="$2"; shift 2 ;;
    --mirror) mirror="$2"; shift 2 ;;
    --test) run_tests=1; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fresh-debian: error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$(id -u)" == 0 ]] || { echo "fresh-debian: error: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
summary="$root.summary"
say() { echo "fresh-debian: $*" >&2; }
note() { echo "$*" | tee -a "$summary"; }

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R -l "${mounted[i]}" 2>/dev/null || true; done
  if ((keep == 0)) && [[ -d "$root" ]]; then
    say "removing $root (--keep leaves it)"
    rm -rf --one-file-system "$root"
  fi
}
trap cleanup EXIT

if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2
fi

rm -rf --one-file-system "$root"
: >"$summary"
note "fresh-debian: $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname) ($(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo))"
note "repository: $repo at $(git -C "$repo" rev-parse --short HEAD) (a clean git clone of the commit, no uncommitted files)"

say "debootstrap --variant=minbase bookworm $root $mirror"
start=$(date +%s)
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 \
  || { tail -20 "$root.debootstrap.log" >&2; exit 1; }
note "root: debootstrap --variant=minbase bookworm from $mirror, $(($(date +%s) - start)) s"

# What a Debian 12 install's apt sees: the release, its updates and the security archive.
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
# This machine's clock may be past the archive's Valid-Until dates (a sandbox's clock): apt is told
# not to mind, as on the host.
echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99fresh-debian"
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# An installed machine's /etc/hosts names the machine (the installer writes it; debootstrap does
# not): munged and slurmd look up the host name, as the SLURM tests' one-node cluster needs.
{ cat /etc/hosts 2>/dev/null; echo "127.0.1.1 $(hostname) $(hostname -s)"; } >"$root/etc/hosts"
hostname >"$root/etc/hostname"
git clone -q --no-hardlinks "$repo" "$root/root/runx"

for m in proc sys dev dev/pts dev/shm; do
  mkdir -p "$root/$m"
  case "$m" in
    proc) mount -t proc proc "$root/proc" ;;
    # /sys with what is mounted below it (slurmd wants /sys/fs/cgroup), not passed back to the host
    sys) mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" ;;
    *) mount --bind "/$m" "$root/$m" ;;
  esac
  mounted+=("$root/$m")
done

packages() { chroot "$root" dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" {print $2}' | sort; }
installed_kib() { chroot "$root" dpkg-query -W -f='${db:Status-Abbrev} ${Installed-Size}\n' | awk '$1 == "ii" {s += $2} END {print s}'; }
# Everything but the clone (and its build) and apt's download cache.
disk_mib() { du -sxm --exclude="$root/root/runx" --exclude="$root/var/cache/apt" "$root" | cut -f1; }
units() { find "$root/etc/systemd/system" -mindepth 2 -maxdepth 2 \( -path '*.wants/*' -o -path '*.requires/*' \) -printf '%f\n' 2>/dev/null | sort -u; }

# step NAME COMMAND [USER]: runs COMMAND in the chroot, in the clone, as root (or USER), and reports
# what it added.
step() {
  local name="$1" cmd="$2" user="${3:-root}" log="$root.$1.log" p0 k0 d0 u0 t0 t rc=0 p1 k1 d1 u1 added enabled
  p0="$(packages)" k0=$(installed_kib) d0=$(disk_mib) u0="$(units)"
  say "$name: $cmd (log: $log)"
  t0=$(date +%s)
  chroot --userspec="$user:$user" "$root" /usr/bin/env -i HOME="$(chroot "$root" sh -c "echo ~$user")" TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "cd /root/runx && $cmd" >"$log" 2>&1 || rc=$?
  t=$(($(date +%s) - t0))
  p1="$(packages)" k1=$(installed_kib) d1=$(disk_mib) u1="$(units)"
  added=$(comm -13 <(echo "$p0") <(echo "$p1") | grep -c . || true)
  enabled=$(comm -13 <(echo "$u0") <(echo "$u1") | tr '\n' ' ')
  note ""
  note "$name: \`$cmd\` as $user: exit $rc, $((t / 60)) min $((t % 60)) s"
  note "  packages: $(echo "$p0" | grep -c .) -> $(echo "$p1" | grep -c .) (+$added), installed size (dpkg) +$(((k1 - k0) / 1024)) MiB, disk of the root (without the clone and apt's cache) $d0 -> $d1 MiB"
  note "  build directory: $(du -sm "$root/root/runx/build" 2>/dev/null | cut -f1) MiB; apt's download cache: $(du -sm "$root/var/cache/apt" | cut -f1) MiB"
  note "  units enabled after the step that were not before: ${enabled:-none}"
  note "  runx's own line about services: $(grep -h '^runx: the packages enabled' "$log" || echo 'none (no package enabled a unit)')"
  note "  build progress lines: $(grep -c '^runx: building \[' "$log" || true); last lines of the output:"
  tail -12 "$log" | sed 's/^/    | /' | tee -a "$summary"
  return "$rc"
}

quick_rc=0
step quickstart "./runx experiments/quickstart.yaml" || quick_rc=$?
note "  after the quickstart: $(packages | grep -cE '^(chromium|python3-torch|slurm-wlm|munge|libgtest-dev)$' || true) of chromium, python3-torch, slurm-wlm, munge, libgtest-dev installed; RUNX_BUILD_TESTS in the build: $(grep -h '^RUNX_BUILD_TESTS' "$root/root/runx/build/CMakeCache.txt" 2>/dev/null || echo '?')"
# A user who is not root, with the run set and none of the test set: runs the quickstart again on
# the same build (nothing to install, nothing to build).
if ((quick_rc == 0)); then
  chroot "$root" useradd --create-home runner
  chroot "$root" chown -R runner:runner /root/runx  # the root's user names, not this machine's
  chmod 755 "$root/root"
  step quickstart-as-user "./runx experiments/quickstart.yaml --force" runner || quick_rc=$?
  chroot "$root" chown -R root:root /root/runx
fi
if ((run_tests)) && ((quick_rc == 0)); then
  step test "./scripts/test" || true
  note "  /etc/munge/munge.key: $([[ -e "$root/etc/munge/munge.key" ]] && echo 'present (written by munge'\''s postinst)' || echo absent)"
fi
say "summary: $summary"
exit "$quick_rc"
