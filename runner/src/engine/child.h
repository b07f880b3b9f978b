#pragma once
// Runs one trial in its own child process (`runx trial`), so that a segfault, an abort, an
// out-of-memory kill or a hang ends that trial only: the parent turns it into a result.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace runx::engine {

struct ChildOptions {
  std::string runx_exe;        ///< the runx binary to start (normally /proc/self/exe)
  double timeout_s = 3600;     ///< wall-clock limit for the whole trial
  std::function<void(const nlohmann::json& event)> on_event;  ///< progress events from the child
  const std::atomic<bool>* interrupted = nullptr;  ///< set by the parent's SIGINT/SIGTERM handler
  /// Environment variables set (or replaced) for the child, e.g. CUDA_VISIBLE_DEVICES to pin it
  /// to one GPU; the rest of the parent's environment is inherited.
  std::map<std::string, std::string> env;
};

enum class ChildOutcome { kRecorded, kInterrupted };

/// Starts `runx trial` for `config`, relays its events, and fills `record`: the child's own record
/// when it finished, otherwise one with status crashed / oom / timeout saying how far it got.
/// Returns kInterrupted (record untouched) when the parent was interrupted meanwhile; the child
/// is then ended.
ChildOutcome RunTrialInChild(const nlohmann::json& config, const ChildOptions& options,
                             store::TrialRecord* record);

/// The `runx trial --config IN --out OUT` side: runs the trial in this process, prints progress
/// events as JSON lines on stdout, writes the record to OUT atomically. Returns the exit status.
/// `progress_path` (may be empty) is a file the child keeps {steps done, total} in after every
/// step through shared memory, so the parent knows how far a trial got even when it crashes
/// between progress events.
/// `parent_pid` (0: unknown) is the runx that started it: the child exits at once if that one is
/// already gone, and is killed when it dies.
int TrialChildMain(const std::string& config_path, const std::string& out_path, const std::string& progress_path,
                   int64_t parent_pid);

/// Removes the temporary folders of trials whose runx is gone (killed before it could clean up);
/// returns how many.
int RemoveStaleTrialDirs();

/// Path of the running executable.
std::string SelfExe();

}  // namespace runx::engine
