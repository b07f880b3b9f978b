#pragma once
// Runs one trial in its own child process (`runx-worker trial`, worker/child.h), so that a
// segfault, an abort, an out-of-memory kill or a hang ends that trial only: the parent turns it
// into a result. Torch-free: the parent is runx.
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
  std::string runx_exe;                                       ///< the worker to start (WorkerPath())
  double timeout_s = 3600;                                    ///< wall-clock limit for the whole trial
  std::function<void(const nlohmann::json& event)> on_event;  ///< progress events from the child
  const std::atomic<bool>* interrupted = nullptr;             ///< set by the parent's SIGINT/SIGTERM handler
  /// Environment variables set (or replaced) for the child, e.g. CUDA_VISIBLE_DEVICES to pin it
  /// to one GPU; the rest of the parent's environment is inherited.
  std::map<std::string, std::string> env;
  /// A data-parallel trial's ranks are runx's children by default. With a launcher (e.g.
  /// {"srun", "--kill-on-bad-exit=1"}: RUNX_RANK_LAUNCHER), runx starts that command once with
  /// --ntasks=N and the rank's command line after it; it starts the ranks, which read their rank
  /// from its environment (SLURM_PROCID, ...), and ends them all when one fails.
  std::vector<std::string> rank_launcher;
};

/// The launcher of RUNX_RANK_LAUNCHER ("srun" and its options, split at spaces; srun gets
/// --kill-on-bad-exit=1 unless it is given); empty when unset.
std::vector<std::string> RankLauncherFromEnvironment();

enum class ChildOutcome { kRecorded, kInterrupted };

/// Starts `runx trial` for `config`, relays its events, and fills `record`: the child's own record
/// when it finished, otherwise one with status crashed / oom / timeout saying how far it got.
/// Returns kInterrupted (record untouched) when the parent was interrupted meanwhile; the child
/// is then ended.
ChildOutcome RunTrialInChild(const nlohmann::json& config, const ChildOptions& options, store::TrialRecord* record);

/// Removes the temporary folders of trials whose runx is gone (killed before it could clean up);
/// returns how many.
int RemoveStaleTrialDirs();

/// The worker that runs trials (`runx-worker trial`, worker/child.h): RUNX_WORKER when set, else
/// runx-worker beside the running executable (runx's bin/, in the build tree and installed).
std::string WorkerPath();

}  // namespace runx::engine
