#pragma once

// Temporaries removed when a signal ends the process (Ctrl-C, SIGTERM from kill or scancel,
// SIGHUP from a closed terminal), and folders of processes that died without cleaning up.

#include <optional>
#include <string>

namespace runx::base {

/// While it lives, `path` (a file, or an empty folder once the files registered after it are
/// gone) is removed if SIGINT, SIGTERM or SIGHUP ends the process: RemoveOnSignalHandlers's
/// handler removes every registered path, newest first, with async-signal-safe calls (unlink,
/// rmdir). Registering and unregistering block those signals for the moment they take.
class RemoveOnSignal {
 public:
  explicit RemoveOnSignal(std::string path);
  ~RemoveOnSignal();
  RemoveOnSignal(const RemoveOnSignal&) = delete;
  RemoveOnSignal& operator=(const RemoveOnSignal&) = delete;

 private:
  std::string path_;
};

/// Installs, while it lives, the handler for SIGINT, SIGTERM and SIGHUP that removes the
/// registered paths and then ends the process by the same signal (its default action: the exit
/// status still says which). The previous handlers come back when it ends.
class RemoveOnSignalHandlers {
 public:
  RemoveOnSignalHandlers();
  ~RemoveOnSignalHandlers();
  RemoveOnSignalHandlers(const RemoveOnSignalHandlers&) = delete;
  RemoveOnSignalHandlers& operator=(const RemoveOnSignalHandlers&) = delete;
};

/// A lock file held by this process while the object lives: other processes on the host, in any
/// PID namespace, learn from it whether its holder is alive (a pid alone cannot say: another
/// namespace's pids are not this one's). The lock goes with the process however it ends; the
/// file stays after a SIGKILL until a later process finds it free and removes it.
class HeldLock {
 public:
  /// Creates `path` (its folder must exist) and locks it; throws std::runtime_error.
  explicit HeldLock(std::string path);
  ~HeldLock();  ///< unlocks and removes the file
  HeldLock(const HeldLock&) = delete;
  HeldLock& operator=(const HeldLock&) = delete;
  const std::string& path() const { return path_; }

  enum class State { kMissing, kHeld, kFree };
  /// Whether a process holds the lock at `path`.
  static State Probe(const std::string& path);

 private:
  std::string path_;
  int fd_ = -1;
};

/// A folder that says whether the process that made it is alive, across PID namespaces (a
/// container sharing the host's /tmp sees other pids): its maker holds an flock on `<folder>/lock`
/// for the folder's life; the lock goes with the process, however it ends.
class OwnedFolder {
 public:
  /// Creates `path` (which must not exist) with its lock held; throws std::runtime_error.
  explicit OwnedFolder(std::string path);
  /// Releases the lock and removes the folder with its content.
  ~OwnedFolder();
  OwnedFolder(const OwnedFolder&) = delete;
  OwnedFolder& operator=(const OwnedFolder&) = delete;
  const std::string& path() const { return path_; }

  /// Whether a process holds `folder`'s lock. A folder without a lock file (being made, or made
  /// by an older runx) counts as held unless it is older than `grace_s` seconds.
  static bool Held(const std::string& folder, double grace_s = 60);

 private:
  std::string path_;
  std::optional<HeldLock> lock_;  ///< `<folder>/lock`
};

/// Removes the folders in `parent` whose names start with `prefix` and whose OwnedFolder lock no
/// process holds (left by a process killed with SIGKILL); returns how many.
int RemoveAbandonedFolders(const std::string& parent, const std::string& prefix);

}  // namespace runx::base
