#pragma once
// A file mapped read-only into memory, for zero-copy tensors over data sets on disk.
#include <cstddef>
#include <cstdint>
#include <string>

namespace runx::data {

/// A whole file mapped PROT_READ + MAP_SHARED: its pages are the kernel's page cache, shared with
/// every process that maps or reads the file, loaded on first touch and dropped under memory
/// pressure instead of being swapped. Writing through data() is a segmentation fault.
class MappedFile {
 public:
  /// How the pages will be read, passed to madvise (best effort; errors are ignored).
  enum class Access { kNormal, kSequential, kRandom, kWillNeed };

  /// Maps `path`; throws DataError naming the file when it cannot be opened, is empty or not a
  /// regular file.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  void Advise(Access access) const;

 private:
  std::string path_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace runx::data
