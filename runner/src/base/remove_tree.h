#pragma once
// rm -rf for runx. Not std::filesystem::remove_all: PyTorch's pip wheels (2.x) export their own
// copy of libstdc++'s filesystem symbols from libtorch_cpu.so, and the dynamic linker binds
// remove_all to that copy. On the H200 it called through a null PLT entry (runx died, pc 0, at the
// end of every trial); on the H100 (torch 2.11.0+cu130, Ubuntu 24.04, g++ 13.3) a ten-line program
// segfaults in remove_all of any non-empty directory. libc's nftw cannot be interposed that way.
// The ctest Portability.NoRemoveAllWhereLibTorchIsLinked keeps remove_all out of runx, the plugins
// and the LibTorch tests (which use this one through tests/remove_tree.h).
#include <ftw.h>

#include <cstdio>
#include <string>

namespace runx::base {

/// Removes `dir` and everything under it, not following symbolic links; a missing `dir` is no error.
inline void RemoveTree(const std::string& dir) {
  nftw(
      dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return std::remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

}  // namespace runx::base
