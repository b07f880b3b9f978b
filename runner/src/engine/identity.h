#pragma once
// The environment half of a trial's identity (the config half is spec/identity.h), the identity
// of this runx build, and the identity of this process, by which other runners tell whether a
// run that claimed trials is still alive.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "plugins/loader.h"

namespace runx::engine {

/// This runx build: sha256 over the content of the runx executable and of every plugin library
/// of `registry`, so that any change to runx or to a plugin is a new build (a version string or a
/// git sha would miss uncommitted changes and rebuilds with other flags). Computed once.
std::string BuildIdentity(const plugins::Registry& registry);

/// The build type this runx was compiled as (CMake's CMAKE_BUILD_TYPE).
std::string BuildType();

/// sha256 of the platform a trial runs on: LibTorch, CUDA and cuDNN versions and the name of
/// `device` ("cpu: <cpu model>", "cuda: NVIDIA H200", ...), on the CPU also the BLAS library.
std::string PlatformIdentity(const c10::Device& device);

/// The same from `env` (TrialEnvironment's facts).
std::string PlatformIdentity(const c10::Device& device, const std::map<std::string, std::string>& env);

/// The platform identity of a trial that ran beside `side_by_side - 1` others on the CPU's cores
/// (--devices cpu,cpu; engine/device_slots.h TrialsSideBySide): sha256 of `platform` and how many,
/// another platform, since its timings are not those of a trial alone, so that neither reuses the
/// other's results. `platform` itself, byte for byte, for a trial alone (side_by_side 1): every
/// identity recorded before this rule stays valid.
std::string SideBySidePlatform(const std::string& platform, int side_by_side);

/// The environment identity: sha256 of the build and platform identities.
std::string EnvironmentIdentity(const std::string& build, const std::string& platform);

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
