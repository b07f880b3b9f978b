#include "spec/text_data.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace runx::spec {
namespace {

constexpr size_t kChunk = size_t{1} << 20;
constexpr size_t kBinaryProbe = 8192;

/// A zlib reader (plain files read through unchanged), closed on scope exit.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    errno = 0;
    file_ = gzopen(path.c_str(), "rb");
    if (!file_)
      throw TextDataError(fmt::format("cannot read '{}': {}", path, errno ? std::strerror(errno) : "out of memory"));
  }
  ~GzReader() {
    if (file_) gzclose(file_);
  }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  /// Up to `size` bytes into `out`; 0 at the end.
  size_t Read(char* out, size_t size) {
    const int n = gzread(file_, out, static_cast<unsigned>(size));
    if (n < 0) {
      int code = 0;
      const char* what = gzerror(file_, &code);
      throw TextDataError(
          fmt::format("cannot read '{}': {}", path_, code == Z_ERRNO ? std::strerror(errno) : std::string(what)));
    }
    return static_cast<size_t>(n);
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
};

bool StartsWithGzipMagic(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  unsigned char magic[2] = {0, 0};
  const size_t n = std::fread(magic, 1, 2, f);
  std::fclose(f);
  return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

/// Whether the first 8 KiB of the text hold a NUL byte.
bool LooksBinary(const std::string& path) {
  GzReader reader(path);
  std::string head(kBinaryProbe, '\0');
  size_t have = 0;
  while (have < head.size()) {
    const size_t n = reader.Read(head.data() + have, head.size() - have);
    if (n == 0) break;
    have += n;
  }
  return std::memchr(head.data(), '\0', have) != nullptr;
}

TextFile Describe(const std::string& path, const struct stat& st) {
  TextFile f;
  f.path = path;
  f.gzip = StartsWithGzipMagic(path);
  if (!f.gzip) f.bytes = static_cast<int64_t>(st.st_size);
  return f;
}

}  // namespace

std::vector<TextFile> ListTextFiles(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw TextDataError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  if (S_ISREG(st.st_mode)) {
    GzReader probe(path);  // readable (and, for gzip, a valid header)
    return {Describe(path, st)};
  }
  if (!S_ISDIR(st.st_mode)) throw TextDataError(fmt::format("'{}' is neither a file nor a folder", path));

  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().string());
  if (ec) throw TextDataError(fmt::format("cannot read folder '{}': {}", path, ec.message()));
  std::sort(names.begin(), names.end());
  std::vector<TextFile> files;
  std::set<std::pair<dev_t, ino_t>> taken;
  for (const auto& name : names) {
    struct stat file {};
    if (::stat(name.c_str(), &file) != 0 || !S_ISREG(file.st_mode)) continue;
    if (!taken.insert({file.st_dev, file.st_ino}).second) continue;  // a second name of a file already taken
    if (LooksBinary(name)) continue;
    files.push_back(Describe(name, file));
  }
  if (files.empty())
    throw TextDataError(
        fmt::format("folder '{}' holds no text files (binary files, with a NUL byte in their first "
                    "8 KiB, are left out)",
                    path));
  return files;
}

std::optional<int64_t> TotalBytes(const std::vector<TextFile>& files) {
  int64_t total = 0;
  for (const auto& f : files) {
    if (!f.bytes) return std::nullopt;
    total += *f.bytes;
  }
  return total;
}

void ReadText(const TextFile& file, const std::function<void(const char* data, size_t size)>& chunk) {
  GzReader reader(file.path);
  std::vector<char> buffer(kChunk);
  while (const size_t n = reader.Read(buffer.data(), buffer.size())) chunk(buffer.data(), n);
}

TokenSplit SplitTokens(int64_t tokens, double val_fraction) {
  TokenSplit s;
  s.val = static_cast<int64_t>(std::floor(static_cast<double>(tokens) * val_fraction));
  s.val = std::clamp<int64_t>(s.val, 0, tokens);
  s.train = tokens - s.val;
  return s;
}

int64_t BlockCount(int64_t tokens, int64_t seq_len) {
  if (seq_len < 1 || tokens <= seq_len) return 0;
  return (tokens - 1) / seq_len;
}

}  // namespace runx::spec
