#pragma once
// The child's side of a trial's process (`runx-worker trial`): runs the trial the parent
// (sweep/child.h) handed it and writes its record. Torch-free header: the command table declares
// the internal `trial` command with TrialChildArgs.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace runx::engine {

/// What `runx trial` (internal) is told.
struct TrialChildArgs {
  std::string config_path;  ///< --config: the resolved config (JSON)
  std::string out_path;     ///< --out: where the record goes (rank r > 0: OUT.rankR, which nobody reads)
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

/// Runs the trial of `config` in this process, with the plugins of plugins::PluginDirs(): the
/// worker's `run --in-process` (debugging; no crash isolation).
store::TrialRecord RunTrialHere(const nlohmann::json& config);

/// Path of the running executable.
std::string SelfExe();

}  // namespace runx::engine
