#!/usr/bin/env bash
# A copy of ../shared/device/build.sh that builds only ${TARGETS} (default all): cheaper GPU-machine
# runs. Use: bash ../shared/device/prepare.sh, then on the device
#   TARGETS="runx-app runx_integration_test" bash scripts/device-build-targets.sh
# Runs ON the GPU machine, from the project root (carried there as .device/build.sh).
# Unpacks the carried Debian packages into /tmp/deps, then configures and builds the project
# against the LibTorch bundled with the machine's pip PyTorch, into build-device/.
# Afterwards: export LD_LIBRARY_PATH as printed, or use the env file build-device/env.sh.
set -euo pipefail
deps=/tmp/deps
if [ ! -f $deps/.done ]; then
  mkdir -p $deps && for f in .device/debs/*.deb; do dpkg -x "$f" $deps; done && touch $deps/.done
fi
torch_cmake=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
lib=$deps/usr/lib/x86_64-linux-gnu
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$torch_cmake;$deps/usr;$lib/cmake" \
  -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSQLite3_INCLUDE_DIR=$deps/usr/include -DSQLite3_LIBRARY=$lib/libsqlite3.so \
  -DCMAKE_CXX_FLAGS="-isystem $deps/usr/include" "$@" > build-device.log 2>&1 \
  || { tail -40 build-device.log; exit 1; }
cmake --build build-device -j"$(nproc)" --target ${TARGETS:-all} >> build-device.log 2>&1 || { grep -E 'error|Error' -m 30 build-device.log; tail -20 build-device.log; exit 1; }
torch_lib=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))')
echo "export LD_LIBRARY_PATH=$lib:$torch_lib:\${LD_LIBRARY_PATH:-}" > build-device/env.sh
echo "built: build-device (source build-device/env.sh before running binaries)"
