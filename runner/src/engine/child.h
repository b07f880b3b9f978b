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
ChildOutcome RunTrialInChild(const nlohmann::json& config, const ChildOptions& options,
                             store::TrialRecord* record);

/// What `runx trial` (internal) is told.
struct TrialChildArgs {
  std::string config_path;    ///< --config: the resolved config (JSON)
  std::string out_path;       ///< --out: where the record goes (rank r > 0: OUT.rankR, which nobody reads)
  /// --progress (may be empty): a file the child keeps {steps done, total} in after every step
  /// through shared memory, so the parent knows how far a trial got even when it crashes between
  /// progress events.
  std::string progress_path;
  /// --parent (0: unknown): the runx that started it: the child exits at once if that one is
  /// already gone, and is killed when it dies.
  int64_t parent_pid = 0;
  /// A rank of a data-parallel trial: --rank R --world-size N --rendezvous FILE (the parent
  /// starts the ranks), or --rendezvous FILE --ranks-from-env (srun or torchrun started them and
  /// set SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID or RANK/WORLD_SIZE/LOCAL_RANK).
  int rank = -1;
  int world_size = 0;
  std::string rendezvous;
  bool ranks_from_env = false;
};

/// The `runx trial` side: runs the trial in this process, prints progress events as JSON lines on
/// stdout (rank 0 only), writes the record to the out path atomically. Returns the exit status.
int TrialChildMain(const TrialChildArgs& args);

/// Removes the temporary folders of trials whose runx is gone (killed before it could clean up);
/// returns how many.
int RemoveStaleTrialDirs();

/// Path of the running executable.
std::string SelfExe();

}  // namespace runx::engine
