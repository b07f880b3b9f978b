#pragma once

// Files read whole, written whole or not at all, locked; inputs that must be files.
//
// POSIX calls, not std::filesystem: the engine links pip's LibTorch, which exports its own copies
// of libstdc++'s filesystem symbols (see base/remove_tree.h).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace runx::base {

/// What is at `path` when it is not a regular file, in words ("a FIFO", "a character device",
/// "a directory", "a socket"...); "" for a regular file (a symlink is followed). A path that cannot
/// be examined is "" too: opening it says why.
std::string NotRegularFileKind(const std::string& path);

/// Writes `content` to `path` whole or not at all: into a temporary file beside it, every write
/// checked, fsync'd, renamed over `path`, and the folder fsync'd, so that after a crash or a full
/// disk `path` holds either what it held or all of `content`. A symlink is followed (the file it
/// names is replaced, the link stays); a FIFO, a device or any other file that is not a regular
/// file is refused, never replaced. On any failure the temporary is removed and `path` is as it
/// was. Returns "" or what went wrong ("cannot write 'x': No space left on device").
[[nodiscard]] std::string WriteFileAtomically(const std::string& path, std::string_view content);

/// The same, throwing std::runtime_error with that text.
void WriteFileAtomicallyOrThrow(const std::string& path, std::string_view content);

/// The bytes of `path`, read to its end (so a /proc file, whose size says 0, is read whole);
/// nullopt when it cannot be opened or read, `error` (when given) then saying why in strerror's
/// words ("No such file or directory", "Is a directory"). The open does not wait for a writer of
/// a FIFO (with none, the read ends at once). Reading stops once more than `max_bytes` are read:
/// a caller with a limit sees that the file is bigger without reading all of it (or a device
/// without end).
std::optional<std::string> ReadFile(const std::string& path, std::string* error = nullptr,
                                    size_t max_bytes = std::string::npos);

/// The first line of a small file (/proc, /sys) without its line end and trailing blanks; "" when
/// it cannot be read.
std::string ReadFirstLine(const std::string& path);

/// The folder temporary files go in: $TMPDIR when set and not empty, else /tmp.
std::string TempDir();

/// A new folder TempDir()/`prefix`XXXXXX (mkdtemp: mode 0700, a name no other process is given);
/// nullopt when it cannot be made, `error` (when given) then saying so with strerror's words
/// ("cannot create a folder in '/tmp': No space left on device").
std::optional<std::string> MakeTempDir(const std::string& prefix, std::string* error = nullptr);

/// Holds an exclusive lock on `path` (created) while alive, waiting for it: two processes that
/// make one file take turns, and the second finds it made. Unlike HeldLock (base/cleanup.h) it
/// waits, and leaves the file; a file that cannot be opened is no lock at all (nothing waits).
class FileLock {
 public:
  explicit FileLock(const std::string& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace runx::base
