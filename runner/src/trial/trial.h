#pragma once
// One trial: build model, data and techniques from a resolved config, train, measure, evaluate.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "trial/process_group.h"

namespace runx::plugins {
class Registry;
}

namespace runx::engine {

/// Progress of a running trial, for the live line.
struct Progress {
  int64_t step = 0, total = 0;
  bool warmup = false;
  double loss = 0;
  int64_t peak_mem_bytes = 0;  ///< so far (device allocator peak, or the process's peak RSS)
};

struct TrialOptions {
  std::function<void(const Progress&)> on_progress;  ///< called every progress_every steps
  int64_t progress_every = 50;
  /// Called after every step with (steps done, total): must be cheap (no I/O).
  std::function<void(int64_t, int64_t)> on_step;
  /// Set in each rank process of a data-parallel trial (the parent starts them): the trial joins
  /// the other ranks, trains on its shard of each global batch, and averages what it records.
  std::optional<RankRole> rank;
};

/// Runs the trial described by `config` and returns its record (device, status, steps, metrics,
/// environment; what the trial is in its run is the parent's to add: sweep/record.h). Failures of the trial itself (out
/// of memory, an exception in the model or a technique, NaN loss) come back as a record with that status, never as an
/// exception. Only programming errors throw.
store::TrialRecord RunTrial(const nlohmann::json& config, const plugins::Registry& registry,
                            const TrialOptions& options = {});

}  // namespace runx::engine
