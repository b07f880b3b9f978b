# Shared by ./runx and ./scripts/test: install missing Debian packages, configure, build.
# Sourced, not run. Everything the project needs is listed in scripts/debian-packages.txt.

runx_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runx_build_dir="${RUNX_BUILD_DIR:-$runx_root/build}"

runx_missing_packages() {
  local pkg missing=()
  while read -r pkg; do
    [[ -z "$pkg" || "$pkg" == \#* ]] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done < "$runx_root/scripts/debian-packages.txt"
  echo "${missing[@]:-}"
}

runx_ensure_packages() {
  local missing
  missing="$(runx_missing_packages)"
  [[ -z "$missing" ]] && return 0
  if [[ "$(id -u)" != 0 ]]; then
    echo "runx: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y $missing" >&2
    exit 1
  fi
  # Two runx started together on a fresh machine would both run apt-get, and the second would die
  # on apt's lock: runx installs under its own lock, and looks again once it holds it (the other
  # may have installed everything). DPkg::Lock::Timeout waits out anyone else's dpkg.
  exec {apt_lock}>/var/lock/runx-apt.lock && flock "$apt_lock"
  missing="$(runx_missing_packages)"
  if [[ -n "$missing" ]]; then
    echo "runx: installing Debian packages: $missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    { apt-get -o DPkg::Lock::Timeout=600 update -qq &&
        apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing; } >&2 \
      || { echo "runx: apt-get failed (see above)" >&2; exit 1; }
  fi
  exec {apt_lock}>&-
}

# runx_build TARGET...: configure once (Release, Ninja, ccache), then build incrementally.
runx_build() {
  local log="$runx_build_dir/build.log" lock
  mkdir -p "$runx_build_dir"
  # One build at a time: two ./runx started together (two runners on one store) would otherwise
  # run ninja on the same directory at once and truncate each other's outputs.
  exec {lock}>"$runx_build_dir/.build.lock"
  flock "$lock"
  if [[ ! -f "$runx_build_dir/build.ninja" ]]; then
    echo "runx: configuring and building into $runx_build_dir (the first build takes several minutes; log: $log)" >&2
    cmake -S "$runx_root" -B "$runx_build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1 \
      || { tail -30 "$log" >&2; echo "runx: cmake configure failed (full log: $log)" >&2; exit 1; }
  fi
  cmake --build "$runx_build_dir" --target "$@" -- -j"$(nproc)" >>"$log" 2>&1 \
    || { grep -E "error|FAILED" "$log" | tail -20 >&2; echo "runx: build failed (full log: $log)" >&2; exit 1; }
  exec {lock}>&-  # released: the runner itself runs unlocked
}
