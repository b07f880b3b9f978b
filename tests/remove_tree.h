#pragma once
// rm -rf for tests. Not std::filesystem::remove_all: in a binary linked against pip's LibTorch 2.x,
// that call can bind to the copy libtorch.so exports, which jumps through a null PLT entry (it
// crashed runx on the H200; docs/benchmarks.md). libc's nftw cannot be interposed that way.
#include <ftw.h>

#include <cstdio>
#include <string>

namespace runx::testing {

inline void RemoveTree(const std::string& dir) {
  nftw(
      dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return std::remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

}  // namespace runx::testing
