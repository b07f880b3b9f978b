#pragma once
// One trial: build model, data and techniques from a resolved config, train, measure, evaluate.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace runx::plugins { class Registry; }

namespace runx::engine {

/// Progress of a running trial, for the live line.
struct Progress {
  int64_t step = 0, total = 0;
  bool warmup = false;
  double loss = 0;
};

struct TrialOptions {
  std::function<void(const Progress&)> on_progress;  ///< called every progress_every steps
  int64_t progress_every = 50;
};

/// Runs the trial described by `config` and returns its record (status, steps, metrics,
/// environment). Failures of the trial itself (out of memory, an exception in the model or a
/// technique, NaN loss) come back as a record with that status, never as an exception. Only
/// programming errors throw.
store::TrialRecord RunTrial(const nlohmann::json& config, const plugins::Registry& registry,
                            const TrialOptions& options = {});

/// The label of a trial from its techniques and precision: "baseline" or e.g. "bf16+channels_last".
std::string TrialLabel(const nlohmann::json& config);

}  // namespace runx::engine
