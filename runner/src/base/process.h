#pragma once
// Starting other programs: the trial processes, SLURM's and git's commands, compile_step.py. No
// shell is involved, so nothing in an argument is interpreted.
//
// posix_spawn (vfork semantics), not fork: the parent may hold a CUDA context, and a fork's
// copy-on-write duplicate of its pinned and device-mapped memory breaks that context (seen on the
// H200: the parent died at the trial's end). Whatever the child needs (its streams, process group,
// signals, environment) is said in SpawnOptions and done by posix_spawn's file actions and
// attributes, never by code run in a forked copy of this process.

#include <sys/types.h>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace runx::base {

/// Where a spawned process's stdin, stdout or stderr goes.
struct SpawnStream {
  enum class To { kInherit, kNull, kFd, kFile };
  To to = To::kInherit;
  int fd = -1;       ///< kFd: a descriptor of this process
  std::string path;  ///< kFile: read, or written (created, truncated, mode 0644)

  static SpawnStream Inherit() { return {}; }                  ///< this process's own
  static SpawnStream Null() { return {To::kNull, -1, ""}; }    ///< /dev/null
  static SpawnStream Fd(int fd) { return {To::kFd, fd, ""}; }  ///< a descriptor of this process
  static SpawnStream File(std::string path) { return {To::kFile, -1, std::move(path)}; }
};

struct SpawnOptions {
  /// The program to run when it is not argv[0] (argv[0] is then only the name the process sees).
  /// Either is looked up on PATH unless it holds a '/'.
  std::string program;
  SpawnStream in, out, err;
  /// The process group to join; 0: a new one that the process leads; nullopt: this process's.
  std::optional<pid_t> process_group;
  /// SIGINT, SIGTERM and SIGHUP at their default action, whatever this process does with them.
  bool default_signals = false;
  /// None of this process's descriptors but the three streams (glibc 2.34 and later; elsewhere
  /// only those opened with O_CLOEXEC are closed).
  bool close_other_fds = false;
  /// Set over this process's environment.
  std::map<std::string, std::string> env;
};

/// A program that could not be started. what(): "cannot start 'PROGRAM': REASON".
class SpawnError : public std::runtime_error {
 public:
  SpawnError(const std::string& program, int error);
  int error() const { return error_; }  ///< the errno value (ENOENT: not found)

 private:
  int error_;
};

/// Starts `argv` as `options` say and returns its pid, without waiting; throws SpawnError.
pid_t Spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

/// Waits for the child `pid` to end (through EINTR); its exit status, or 128 + the signal that
/// ended it.
int WaitForExit(pid_t pid);

struct ProcessResult {
  bool started = false;  ///< false: the program could not be run (`error` says why, e.g. not found)
  int status = -1;       ///< exit status, or 128 + the signal that ended it
  std::string out;       ///< stdout
  std::string err;       ///< stderr
  std::string error;     ///< why it did not start: "not found on PATH" for a name, strerror for a path
};

/// Runs `argv` (argv[0] looked up on PATH) and waits for it, keeping what it writes to stdout and
/// stderr. Its stdin is `input` through a pipe (written as it reads, while its output is read; a
/// program that stops reading gets no more, and this process no SIGPIPE), or /dev/null without.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::optional<std::string>& input = std::nullopt);

}  // namespace runx::base
