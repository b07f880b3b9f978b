#pragma once
// rm -rf for tests. Not std::filesystem::remove_all: in a binary linked against pip's LibTorch 2.x,
// that call can bind to the copy libtorch.so exports, which jumps through a null PLT entry (it
// crashed runx on the H200; docs/benchmarks.md). libc's nftw cannot be interposed that way.
// Reproduced 2026-12-06 on the H100 machine (pip torch 2.11.0+cu130, Ubuntu 24.04, g++ 13.3): a
// ten-line program linked against libtorch_cpu.so, which exports 142 std::filesystem symbols,
// dies of SIGSEGV in remove_all of any non-empty directory (with or without an error_code), while
// directory_iterator, recursive_directory_iterator and remove work. Every torch-linked test uses this.
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
