#!/usr/bin/env bash
# Every C++ file of the tree is formatted as .clang-format says (the ctest Format.Tree): prints the
# files that are not, with clang-format's first complaints, and exits 1. The fix is
#   git ls-files '*.cc' '*.h' | xargs clang-format -i
# Usage: check-format.sh ROOT [FILE...]   FILEs: these instead of the tree's (Format.RejectsMisformatted).
# clang-format is Debian 12's (14): another release may format some lines differently.
set -uo pipefail
root=${1:?usage: check-format.sh ROOT [FILE...]}; shift
cf=$(command -v clang-format) || { echo "clang-format is not installed (Debian package clang-format; ./scripts/test installs it)"; exit 1; }
cd "$root" || exit 1
if [ $# -gt 0 ]; then
  files=("$@")
elif git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h')
else  # a source tree without git (an unpacked release)
  mapfile -t files < <(find runner plugins tests bench cmake -name '*.cc' -o -name '*.h' | sort)
fi
out=$("$cf" --style="file:$root/.clang-format" --dry-run --Werror --ferror-limit=3 "${files[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
  echo "$out" | head -n 60
  bad=$(echo "$out" | grep -oE '^[^:]+:[0-9]+:[0-9]+: error' | cut -d: -f1 | sort -u | wc -l)
  echo "$bad of ${#files[@]} files are not formatted as .clang-format says ($("$cf" --version)); fix: git ls-files '*.cc' '*.h' | xargs clang-format -i"
  exit 1
fi
echo "all ${#files[@]} C++ files formatted as .clang-format says"
