#include "base/files.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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
  if (!WriteAll(fd, content) || ::fsync(fd) != 0)
    error = fmt::format("cannot write '{}': {}", temp, std::strerror(errno));
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

std::string TempDir() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

std::optional<std::string> MakeTempDir(const std::string& prefix, std::string* error) {
  const std::string parent = TempDir();
  std::string path = parent + "/" + prefix + "XXXXXX";
  if (mkdtemp(path.data()) == nullptr) {
    if (error) *error = fmt::format("cannot create a folder in '{}': {}", parent, std::strerror(errno));
    return std::nullopt;
  }
  return path;
}

std::optional<std::string> ReadFile(const std::string& path, std::string* error, size_t max_bytes) {
  const auto fail = [&](int err) -> std::optional<std::string> {
    if (error) *error = std::strerror(err);
    return std::nullopt;
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block open()
  if (fd < 0) return fail(errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    const int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
    ::close(fd);
    return fail(err);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buffer[65536];
  while (text.size() <= max_bytes) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return fail(err);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

std::string ReadFirstLine(const std::string& path) {
  const auto text = ReadFile(path);
  if (!text) return "";
  std::string line = text->substr(0, text->find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line;
}

FileLock::FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
  if (fd_ >= 0) {
    while (::flock(fd_, LOCK_EX) < 0 && errno == EINTR) {
    }
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace runx::base
