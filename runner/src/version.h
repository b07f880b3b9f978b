#pragma once

namespace runx {
/// runx's own version (CMake project version) and the git sha it was built from.
const char* Version();
const char* GitSha();
}  // namespace runx
