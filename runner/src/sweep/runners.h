#pragma once
// The identity of a runner process, by which other runners on the same store tell whether a run
// that claimed trials is still alive. Torch-free.
#include <cstdint>
#include <memory>
#include <string>

namespace runx::engine {

/// Tells this process from a later one that got the same pid: the boot id and the process's
/// start time in clock ticks (Linux), "" where unknown.
std::string ProcessToken(int64_t pid);

/// Whether (host, pid, token) is a live process: on another host it cannot be known and counts
/// as alive; on this one the pid must exist and, where a token was recorded, still match it.
bool ProcessAlive(const std::string& host, int64_t pid, const std::string& token);

/// The lock a runner holds beside the store while it runs (`<db>.runners/<nonce>.lock`): runners
/// in other PID namespaces of this host (containers sharing a volume) see its pid as another
/// process, or none; its lock tells them it is alive. `token()` is ProcessToken(pid) with
/// " lock:<nonce>" added, recorded as the run's pid_token. Without a lock (a folder runx cannot
/// write), the token is ProcessToken's alone.
class RunnerLock {
 public:
  explicit RunnerLock(const std::string& db_path);
  ~RunnerLock();
  RunnerLock(const RunnerLock&) = delete;
  RunnerLock& operator=(const RunnerLock&) = delete;
  const std::string& token() const { return token_; }

 private:
  struct Held;
  std::unique_ptr<Held> held_;
  std::string dir_, token_;
};

/// The folder of the runners' locks of the store at `db_path`.
std::string RunnersDir(const std::string& db_path);

/// ProcessAlive for a run of the store at `db_path`: a token with a lock is judged by that lock
/// (held: alive, whatever the pid says; free: gone) while its file is there; then by the pid.
bool RunnerAlive(const std::string& db_path, const std::string& host, int64_t pid, const std::string& token);

/// This machine's host name.
std::string HostName();

}  // namespace runx::engine
