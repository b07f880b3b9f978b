#include "base/files.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace runx::base {
namespace {

std::string KindOf(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string Folder(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// The file a chain of symlinks ends at (itself when `path` is no symlink), missing or not.
std::string FollowLinks(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    char target[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
    if (n <= 0) return path;
    const std::string to(target, static_cast<size_t>(n));
    path = to[0] == '/' ? to : Folder(path) + "/" + to;
  }
  return path;
}

/// Writes all of `data` to `fd`, through short writes and EINTR; false with errno set otherwise.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

std::string NotRegularFileKind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return KindOf(st.st_mode);
}

std::string WriteFileAtomically(const std::string& path, std::string_view content) {
  const std::string target = FollowLinks(path);
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode))
    return fmt::format("'{}' is {}, not a regular file: runx replaces only regular files", path,
                       KindOf(existing.st_mode));
  const std::string temp = fmt::format("{}.tmp-{}", target, static_cast<long>(::getpid()));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return fmt::format("cannot create '{}': {}", temp, std::strerror(errno));
  std::string error;
  if (exists) (void)::fchmod(fd, existing.st_mode & 07777);  // the file keeps its permissions
  if (!WriteAll(fd, content) || ::fsync(fd) != 0) error = fmt::format("cannot write '{}': {}", temp, std::strerror(errno));
  if (::close(fd) != 0 && error.empty()) error = fmt::format("cannot write '{}': {}", temp, std::strerror(errno));
  if (error.empty() && ::rename(temp.c_str(), target.c_str()) != 0)
    error = fmt::format("cannot move '{}' to '{}': {}", temp, target, std::strerror(errno));
  if (!error.empty()) {
    ::unlink(temp.c_str());
    return error;
  }
  // The rename is durable once the folder is: a folder that cannot be synced (some file systems
  // refuse) still holds the whole file.
  const int dir = ::open(Folder(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
  return "";
}

void WriteFileAtomicallyOrThrow(const std::string& path, std::string_view content) {
  if (std::string error = WriteFileAtomically(path, content); !error.empty()) throw std::runtime_error(error);
}

}  // namespace runx::base
