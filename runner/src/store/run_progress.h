#pragma once
// How far a run has got, read from a store another process may be writing (a shard of
// `runx submit --slurm` while its array task runs). No LibTorch.
#include <cstdint>
#include <optional>
#include <string>

namespace runx::store {

struct RunProgress {
  int64_t run_id = 0;
  std::string status;  ///< running | ok | failed | interrupted
  std::string host;
  int64_t trials = 0;         ///< trials the run has a result for (run and reused)
  int64_t ok_trials = 0;      ///< of which ok
  int64_t reused_trials = 0;  ///< of which reused from earlier runs
};

/// The newest run of the store at `path` whose command line contains `command_part` (e.g.
/// "--db /x/stores/shard-0.db"), read as `runx query` reads (nothing in or beside the store
/// changes); nullopt when no run matches. Throws StoreError when the store cannot be read.
std::optional<RunProgress> FindRunProgress(const std::string& path, const std::string& command_part);

}  // namespace runx::store
