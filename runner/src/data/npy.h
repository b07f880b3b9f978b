#pragma once
// NumPy's .npy format (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
// the magic "\x93NUMPY", a version, a header length, a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 784), } padded with spaces, then the
// C-ordered data. Little-endian (or single-byte) data only.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>
#include <torch/types.h>

namespace runx::base {
class RemoveOnSignal;
}  // namespace runx::base

namespace runx::data {

/// What a .npy header says.
struct NpyHeader {
  c10::ScalarType dtype = c10::ScalarType::Byte;
  std::vector<int64_t> shape;
  int64_t data_offset = 0;  ///< bytes from the start of the file to the first element
  int64_t data_bytes() const;
};

/// Whether `bytes` start with the .npy magic.
bool IsNpy(const void* bytes, size_t size);

/// Parses the header at the start of `bytes` (at least the whole header); `path` names the file in
/// errors. Throws DataError for a bad magic, version or header, a dtype runx does not read
/// (big-endian, structured, unsigned wider than a byte, ...) and Fortran order.
NpyHeader ParseNpyHeader(const void* bytes, size_t size, const std::string& path);

/// The .npy header text for `dtype` and `shape`, padded so that the data starts at a multiple of
/// 64 bytes, as NumPy writes it.
std::string NpyHeaderBytes(c10::ScalarType dtype, const std::vector<int64_t>& shape);

/// Writes a .npy file in parts, atomically: into a temporary file beside `path`, renamed over
/// `path` by Commit(). Destroyed without Commit(), it removes the temporary file.
class NpyWriter {
 public:
  NpyWriter(std::string path, c10::ScalarType dtype, std::vector<int64_t> shape);
  ~NpyWriter();
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;
  /// Appends raw element bytes; the total must come to the shape's size by Commit().
  void Append(const void* bytes, size_t size);
  void Commit();

 private:
  std::string path_, temp_;
  std::unique_ptr<base::RemoveOnSignal> remove_on_signal_;  ///< the temporary goes if a signal ends runx
  std::FILE* file_ = nullptr;
  int64_t expected_ = 0, written_ = 0;
};

/// Reads a whole .npy file into a CPU tensor (a copy; MapArray in memmap.h maps one instead).
torch::Tensor LoadNpy(const std::string& path);

/// Writes `t` (copied to a contiguous CPU tensor first if needed) as a .npy file, atomically.
void SaveNpy(const std::string& path, const torch::Tensor& t);

/// The DSL's dtype names ("uint8", "float32", ...) and the .npy descr of each.
c10::ScalarType DtypeFromName(const std::string& name);  ///< throws DataError for an unknown name
std::string DtypeName(c10::ScalarType dtype);
std::string NpyDescr(c10::ScalarType dtype);  ///< throws DataError when NumPy has no such dtype

}  // namespace runx::data
