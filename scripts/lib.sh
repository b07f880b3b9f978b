# Shared by ./runx and ./scripts/test: install missing Debian packages, configure, build.
# Sourced, not run. Two package sets: scripts/debian-packages.txt (the run set: build and run runx)
# and scripts/debian-packages-test.txt (the test set: only ./scripts/test needs it).

runx_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runx_build_dir="${RUNX_BUILD_DIR:-$runx_root/build}"
runx_run_set="$runx_root/scripts/debian-packages.txt"
runx_test_set="$runx_root/scripts/debian-packages-test.txt"

# runx_missing_packages LIST...: the packages of the lists that are not installed.
runx_missing_packages() {
  local pkg missing=()
  while read -r pkg; do
    [[ -z "$pkg" || "$pkg" == \#* ]] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done < <(cat "$@")
  echo "${missing[@]:-}"
}

# The units enabled through /etc/systemd/system/*.wants (and .requires), one a line: readable
# without a running systemd (a chroot, a container).
runx_enabled_units() {
  find /etc/systemd/system -mindepth 2 -maxdepth 2 \( -path '*.wants/*' -o -path '*.requires/*' \) \
    -printf '%f\n' 2>/dev/null | sort -u
}

# runx_disable_units UNIT...: disabled the Debian way (deb-systemd-helper also remembers it, so an
# upgrade of the package does not enable it again), and through systemctl where systemd runs.
runx_disable_units() {
  local unit
  for unit in "$@"; do
    if command -v deb-systemd-helper >/dev/null; then deb-systemd-helper disable "$unit" >/dev/null 2>&1 || true; fi
    if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then
      systemctl disable --now --quiet "$unit" >/dev/null 2>&1 || true
    fi
    # Where neither tool is there: the links themselves.
    find /etc/systemd/system -mindepth 2 -maxdepth 2 \( -path '*.wants/*' -o -path '*.requires/*' \) \
      -name "$unit" -type l -delete 2>/dev/null || true
  done
}

# runx_apt_install PACKAGE...: apt-get install with services kept from starting (a policy-rc.d that
# refuses every start for the time of the install, then the one there before, if any, back) and
# the units the packages enabled disabled again (slurm-wlm and munge enable three).
runx_apt_install() {
  local policy=/usr/sbin/policy-rc.d saved=/usr/sbin/policy-rc.d.runx-saved before after status=0
  local -a enabled=()
  before="$(runx_enabled_units)"
  [[ -e "$policy" ]] && mv -f "$policy" "$saved"
  printf '#!/bin/sh\n# written by runx (scripts/lib.sh) for the time of an apt-get install\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  # shellcheck disable=SC2064
  trap "rm -f '$policy'; [ -e '$saved' ] && mv -f '$saved' '$policy'" EXIT
  export DEBIAN_FRONTEND=noninteractive
  local -a apt=(apt-get -o DPkg::Lock::Timeout=600)
  if "${apt[@]}" update -q >&2; then
    local total
    total=$("${apt[@]}" install -s --no-install-recommends "$@" 2>/dev/null | grep -c '^Inst ' || true)
    echo "runx: installing $# Debian package$( (($# == 1)) || echo s) ($total with what they need): $*" >&2
    "${apt[@]}" install -y -q --no-install-recommends "$@" >&2 || status=$?
  else
    status=1
  fi
  rm -f "$policy"
  [[ -e "$saved" ]] && mv -f "$saved" "$policy"
  trap - EXIT
  after="$(runx_enabled_units)"
  mapfile -t enabled < <(comm -13 <(echo "$before") <(echo "$after") | grep -v '^$')
  if [[ ${#enabled[@]} -gt 0 ]]; then
    runx_disable_units "${enabled[@]}"
    echo "runx: the packages enabled ${enabled[*]}; disabled again and not started (runx starts what it needs itself: scripts/slurm-local.sh)" >&2
  fi
  return "$status"
}

# runx_ensure_packages LIST...: installs what the lists name and is missing (as root; otherwise
# prints the apt-get command and exits 1).
runx_ensure_packages() {
  local missing apt_lock
  missing="$(runx_missing_packages "$@")"
  [[ -z "$missing" ]] && return 0
  if [[ "$(id -u)" != 0 ]]; then
    echo "runx: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing" >&2
    exit 1
  fi
  # Two runx started together on a fresh machine would both run apt-get, and the second would die
  # on apt's lock: runx installs under its own lock, and looks again once it holds it (the other
  # may have installed everything). DPkg::Lock::Timeout waits out anyone else's dpkg.
  exec {apt_lock}>/var/lock/runx-apt.lock && flock "$apt_lock"
  missing="$(runx_missing_packages "$@")"
  if [[ -n "$missing" ]]; then
    # shellcheck disable=SC2206
    local -a pkgs=($missing)
    runx_apt_install "${pkgs[@]}" || { echo "runx: apt-get failed (see above)" >&2; exit 1; }
  fi
  exec {apt_lock}>&-
}

# runx_build_progress LOG: reads a build's output, writes all of it to LOG and shows ninja's
# "[N/M]" as one line on stderr: rewritten in place on a terminal, a line every 10% otherwise.
# Its status: 0 when the build did work (a step other than the version stamp), 1 when it did none.
runx_build_progress() {
  local line n=0 m=0 pct tenth last=-1 tty=0 shown=0 out
  [[ -t 2 ]] && tty=1
  exec {out}>>"$1"
  while IFS= read -r line; do
    printf '%s\n' "$line" >&"$out"
    [[ "$line" =~ ^\[([0-9]+)/([0-9]+)\]\ (.*)$ ]] || continue
    [[ "${BASH_REMATCH[3]}" == "runx version" ]] && continue  # runs on every build
    n=${BASH_REMATCH[1]} m=${BASH_REMATCH[2]}
    pct=$((100 * n / m)) tenth=$((10 * n / m)) shown=1
    if ((tty)); then
      printf '\rrunx: building [%d/%d] %d%%' "$n" "$m" "$pct" >&2
    elif ((tenth > last)); then
      echo "runx: building [$n/$m] $pct%" >&2
      last=$tenth
    fi
  done
  exec {out}>&-
  ((tty && shown)) && echo >&2
  ((shown))
}

# runx_build TESTS TARGET...: configure once (Release, Ninja, ccache), then build incrementally.
# TESTS: "off" configures a new build directory without the test suite (no GTest needed) and
# leaves an existing one as it is; "on" also turns the tests on in a directory configured without.
runx_build() {
  local tests="$1" log="$runx_build_dir/build.log" part="$runx_build_dir/build.log.part" lock logged=0
  shift
  mkdir -p "$runx_build_dir"
  # One build at a time: two ./runx started together (two runners on one store) would otherwise
  # run ninja on the same directory at once and truncate each other's outputs.
  exec {lock}>"$runx_build_dir/.build.lock"
  flock "$lock"
  : >"$part"
  local want=OFF
  [[ "$tests" == on ]] && want=ON
  if [[ ! -f "$runx_build_dir/build.ninja" ]]; then
    echo "runx: configuring and building into $runx_build_dir (tests $tests; the first build takes several minutes; log: $log)" >&2
    cmake -S "$runx_root" -B "$runx_build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRUNX_BUILD_TESTS="$want" \
      >>"$part" 2>&1 || { mv -f "$part" "$log"; tail -30 "$log" >&2; echo "runx: cmake configure failed (full log: $log)" >&2; exit 1; }
    logged=1
  elif [[ "$tests" == on ]] && grep -q '^RUNX_BUILD_TESTS:BOOL=OFF$' "$runx_build_dir/CMakeCache.txt" 2>/dev/null; then
    echo "runx: turning the test suite on in $runx_build_dir" >&2
    cmake -S "$runx_root" -B "$runx_build_dir" -DRUNX_BUILD_TESTS=ON >>"$part" 2>&1 \
      || { mv -f "$part" "$log"; tail -30 "$log" >&2; echo "runx: cmake configure failed (full log: $log)" >&2; exit 1; }
    logged=1
  fi
  # build.log keeps the output of the last build that did something (a no-op build keeps the old one).
  if NINJA_STATUS="[%f/%t] " cmake --build "$runx_build_dir" --target "$@" -- -j"$(nproc)" 2>&1 | runx_build_progress "$part"; then
    logged=1
  elif [[ "${PIPESTATUS[0]}" != 0 ]]; then
    mv -f "$part" "$log"
    grep -E "error|FAILED" "$log" | tail -20 >&2
    echo "runx: build failed (full log: $log)" >&2
    exit 1
  fi
  if ((logged)); then mv -f "$part" "$log"; else rm -f "$part"; fi
  exec {lock}>&-  # released: the runner itself runs unlocked
}
