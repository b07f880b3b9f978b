#pragma once
// What the models loaded from files (torchscript.cc, aoti.cc) share: the check that the file is
// there, and shapes written as the messages write them.
#include <cstdint>
#include <string>
#include <vector>

namespace runx::models {

/// Throws std::invalid_argument "<kind> model '<path>' not found" when `path` is not a regular
/// file, naming the working directory for a relative path.
void RequireModelFile(const std::string& kind, const std::string& path);

/// "[2, 3, 224, 224]".
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace runx::models
