#include "data/pack_manifest.h"

#include <sys/stat.h>

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "data/data.h"
#include "spec/spec.h"

namespace runx::data {
namespace {

constexpr std::streamoff kEdge = 64 << 10;

struct Split {
  std::string folder, name;
};

Split SplitPath(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

/// The file's size and the sha256 of its first and last 64 KiB; throws DataError.
nlohmann::json Fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  struct stat st {};
  if (!in || ::stat(path.c_str(), &st) != 0) throw DataError(fmt::format("cannot read '{}'", path));
  const std::streamoff size = st.st_size;
  std::string edges(static_cast<size_t>(std::min(size, kEdge)), '\0');
  in.read(edges.data(), static_cast<std::streamsize>(edges.size()));
  if (size > kEdge) {
    std::string tail(static_cast<size_t>(std::min(size - kEdge, kEdge)), '\0');
    in.seekg(size - static_cast<std::streamoff>(tail.size()));
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    edges += tail;
  }
  if (!in) throw DataError(fmt::format("cannot read '{}'", path));
  return {{"bytes", static_cast<int64_t>(size)}, {"edges_sha256", spec::Sha256Hex(edges)}};
}

}  // namespace

void WritePackManifest(const std::vector<std::string>& files) {
  if (files.empty()) return;
  nlohmann::json listed = nlohmann::json::object();
  for (const auto& f : files) listed[SplitPath(f).name] = Fingerprint(f);
  const std::string manifest = SplitPath(files[0]).folder + "/" + kPackManifest;
  const nlohmann::json doc = {{"written_by", "runx data pack"}, {"files", listed}};
  if (const std::string error = base::WriteFileAtomically(manifest, doc.dump(2) + "\n"); !error.empty())
    throw DataError(error);
}

void CheckPackManifest(const std::vector<std::string>& files) {
  for (const auto& f : files) {
    const Split at = SplitPath(f);
    const std::string manifest = at.folder + "/" + kPackManifest;
    const auto text = base::ReadFile(manifest);
    if (!text) continue;
    const auto doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.contains("files") || !doc["files"].is_object()) continue;
    const auto listed = doc["files"].find(at.name);
    if (listed == doc["files"].end()) continue;
    if (*listed != Fingerprint(f))
      throw DataError(fmt::format(
          "'{}' is not the file `runx data pack` wrote beside the others in '{}' (its size or content differs from "
          "{}): a pack stopped midway leaves files of two packs; pack again (or, if you replaced it on purpose, "
          "delete {})",
          f, at.folder, kPackManifest, manifest));
  }
}

}  // namespace runx::data
