#pragma once
// rm -rf for tests: runx's own nftw RemoveTree (base/remove_tree.h says why not
// std::filesystem::remove_all, which segfaults where pip's LibTorch 2.x is linked).
#include "base/remove_tree.h"

namespace runx::testing {

using runx::base::RemoveTree;

}  // namespace runx::testing
