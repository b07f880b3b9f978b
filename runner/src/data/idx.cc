// IDX format (http://yann.lecun.com/exdb/mnist/): magic 0x00 0x00 0x08 <ndims>, big-endian
// uint32 dims, then uint8 data. zlib reads gzipped and plain files alike.
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <torch/torch.h>

#include "data/data.h"

namespace runx::data {

torch::Tensor ReadIdx(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), &gzclose);
  if (!f) throw DataError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  const auto read = [&](void* buf, unsigned n) {
    if (gzread(f.get(), buf, n) != static_cast<int>(n))
      throw DataError(fmt::format("'{}' is truncated or not an IDX file", path));
  };
  unsigned char magic[4];
  read(magic, 4);
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] == 0 || magic[3] > 4)
    throw DataError(fmt::format("'{}' is not an IDX file of unsigned bytes (bad magic)", path));
  std::vector<int64_t> dims(magic[3]);
  int64_t total = 1;
  for (auto& d : dims) {
    unsigned char b[4];
    read(b, 4);
    d = (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3];
    total *= d;
  }
  if (total <= 0 || total > (int64_t{1} << 34)) throw DataError(fmt::format("'{}' has an implausible size", path));
  auto t = torch::empty(dims, torch::kUInt8);
  auto* p = static_cast<char*>(t.data_ptr());
  for (int64_t done = 0; done < total;) {
    const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(total - done, 1 << 30));
    read(p + done, chunk);
    done += chunk;
  }
  return t;
}

}  // namespace runx::data
