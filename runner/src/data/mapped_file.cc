#include "data/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "data/data.h"

namespace runx::data {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw DataError(fmt::format("'{}' is not a regular file; expected a .npy or raw binary file", path));
  }
  if (st.st_size == 0) {
    ::close(fd);
    throw DataError(fmt::format("'{}' is empty", path));
  }
  size_ = static_cast<size_t>(st.st_size);
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
  const int mmap_errno = errno;
  ::close(fd);  // the mapping keeps the file
  if (p == MAP_FAILED)
    throw DataError(fmt::format("cannot map '{}' ({} bytes) into memory: {}", path, size_, std::strerror(mmap_errno)));
  data_ = static_cast<std::byte*>(p);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

void MappedFile::Advise(Access access) const {
  int advice = MADV_NORMAL;
  switch (access) {
    case Access::kNormal:
      advice = MADV_NORMAL;
      break;
    case Access::kSequential:
      advice = MADV_SEQUENTIAL;
      break;
    case Access::kRandom:
      advice = MADV_RANDOM;
      break;
    case Access::kWillNeed:
      advice = MADV_WILLNEED;
      break;
  }
  (void)::madvise(data_, size_, advice);
}

}  // namespace runx::data
