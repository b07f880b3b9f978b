#include "base/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "base/files.h"

namespace runx::base {
namespace {

struct DigestDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

std::string Hex(const unsigned char* digest, unsigned int size) {
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr);
  return Hex(digest, size);
}

std::string Sha256OfFile(const std::string& path) {
  // O_NONBLOCK: a FIFO opens at once instead of waiting for a writer; only a regular file is
  // hashed (a device such as /dev/zero never ends), and only the size it had when opened.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    const std::string kind = NotRegularFileKind(path);
    throw std::runtime_error(fmt::format("'{}' is {}, not a regular file", path, kind.empty() ? "not a file" : kind));
  }
  std::unique_ptr<EVP_MD_CTX, DigestDeleter> ctx(EVP_MD_CTX_new());
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<char> buffer(1 << 20);
  auto left = static_cast<uint64_t>(st.st_size);
  while (left > 0) {
    const ssize_t n = ::read(fd, buffer.data(), static_cast<size_t>(std::min<uint64_t>(left, buffer.size())));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(
          fmt::format("cannot read '{}': {}", path, n == 0 ? "it shrank while read" : std::strerror(err)));
    }
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(n));
    left -= static_cast<uint64_t>(n);
  }
  ::close(fd);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &size);
  return Hex(digest, size);
}

}  // namespace runx::base
