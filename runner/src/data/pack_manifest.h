#pragma once
// The manifest `runx data pack` writes last into its folder (runx-pack.json): each file's size and
// a fingerprint of its first and last 64 KiB. A pack stopped midway leaves new files beside old
// ones; the manifest of the earlier pack then no longer matches them, and the memmap source
// refuses the mix instead of training on new inputs with old labels. Torch-free.
#include <string>
#include <vector>

namespace runx::data {

inline constexpr const char* kPackManifest = "runx-pack.json";

/// Writes the manifest of `files` (absolute paths in one folder), whole or not at all. Throws
/// DataError.
void WritePackManifest(const std::vector<std::string>& files);

/// Throws DataError when a manifest beside any of `files` lists it with another size or
/// fingerprint (files of two packs, or one changed since). Files without a manifest beside them,
/// or not listed in it, are not checked.
void CheckPackManifest(const std::vector<std::string>& files);

}  // namespace runx::data
