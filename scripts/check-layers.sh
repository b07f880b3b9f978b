#!/usr/bin/env bash
# Checks the module boundaries recorded by CMake (cmake/RunxModule.cmake) on runner/src:
#   1. a file of module M includes (with "...") only M's headers and those of the modules M
#      declares as dependencies;
#   2. a torch-free module reaches no LibTorch header (<torch/..>, <ATen/..>, <c10/..>), neither
#      directly nor through the project's headers it includes, and includes a LibTorch module's
#      header only where that header is declared torch-free.
# Usage: check-layers.sh <build>/module-rules.txt <source root>. Prints each violation; exit 1 if any.
set -euo pipefail
rules="$1"
root="$2"
src="$root/runner/src"
declare -A deps torch_free free_header
while read -r kind name flag rest; do
  case "$kind" in
    module) deps[$name]=" $name ${rest:-} "; [[ "$flag" == TRUE ]] && torch_free[$name]=1 ;;
    header) free_header[$name]=1 ;;
  esac
done < "$rules"

# The project headers a file includes: "a/b.h" -> runner/src/a/b.h, "runx/x.h" -> include/runx/x.h.
includes() { grep -oE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]+"' "$1" | sed -E 's/.*"([^"]+)"/\1/' || true; }
resolve() {
  case "$1" in
    runx/*) echo "$root/runner/include/$1" ;;
    */*) echo "$src/$1" ;;
    version.h) echo "$src/version.h" ;;
    *) echo "" ;;
  esac
}
declare -A reaches_torch_memo
# 0 when `file` reaches a LibTorch header (sets the global `via`), 1 otherwise.
reaches_torch() {
  local file="$1" inc target
  if [[ -n "${reaches_torch_memo[$file]:-}" ]]; then return "${reaches_torch_memo[$file]}"; fi
  reaches_torch_memo[$file]=1  # cycles: assume no
  if grep -qE '^[[:space:]]*#[[:space:]]*include[[:space:]]+<(torch|ATen|c10|caffe2)/' "$file"; then
    via="$file"; reaches_torch_memo[$file]=0; return 0
  fi
  for inc in $(includes "$file"); do
    target="$(resolve "$inc")"
    [[ -n "$target" && -f "$target" ]] || continue
    if reaches_torch "$target"; then reaches_torch_memo[$file]=0; return 0; fi
  done
  return 1
}

bad=0
for dir in "$src"/*/; do
  m="$(basename "$dir")"
  [[ -n "${deps[$m]:-}" ]] || { echo "runner/src/$m: no module rules (declare it with runx_add_module or runx_module_rules)"; bad=1; continue; }
  while IFS= read -r -d '' f; do
    rel="${f#$root/}"
    for inc in $(includes "$f"); do
      top="${inc%%/*}"; [[ "$inc" == version.h ]] && top=version
      [[ "$inc" == */* || "$top" == version ]] || continue  # a header beside the file
      if [[ "${deps[$m]}" != *" $top "* ]]; then
        echo "$rel: includes \"$inc\", but module '$m' does not depend on '$top'"; bad=1
      fi
      if [[ -n "${torch_free[$m]:-}" && "$top" != "$m" && -z "${torch_free[$top]:-}" && "$top" != version \
            && -z "${free_header[$inc]:-}" ]]; then
        echo "$rel: torch-free module '$m' includes \"$inc\" of LibTorch module '$top' (not a declared torch-free header)"; bad=1
      fi
    done
    if [[ -n "${torch_free[$m]:-}" ]]; then
      via=""
      if reaches_torch "$f"; then echo "$rel: torch-free module '$m' reaches LibTorch through ${via#$root/}"; bad=1; fi
    fi
  done < <(find "$dir" \( -name '*.cc' -o -name '*.h' \) -print0)
done
exit $bad
