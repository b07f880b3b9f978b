#pragma once

// Files written whole or not at all, and inputs that must be files.
//
// POSIX calls, not std::filesystem: the engine links pip's LibTorch, which exports its own copies
// of libstdc++'s filesystem symbols (see runx/remove_tree.h).

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

}  // namespace runx::base
