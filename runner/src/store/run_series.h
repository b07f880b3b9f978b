#pragma once
// Reading a run's series back for `runx report` (the HTML report), beyond Store::ReadRunTrials:
// the loss of every training step, summary metrics by name, and the per-step metrics techniques
// record (auto_batch's probes). Only the run's `run_trials` count (reused trials included). No
// LibTorch.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/store.h"

namespace runx::store {

/// The loss of one training step of a trial.
struct LossPoint {
  int64_t position = 0;  ///< the step's place in training: warmup steps first, then measured ones
  double loss = 0;
};

/// The losses of the warmup and measured steps of each trial of run `run_id` that has any, by
/// trial id; steps without a loss (NULL, e.g. `task: infer`) are left out, and `position`
/// counts every warmup and measured step, with or without a loss. Throws StoreError.
std::map<int64_t, std::vector<LossPoint>> ReadLossCurves(Store& store, int64_t run_id);

/// The summary metrics (step NULL, value not NULL) named in `names` of the trials of run
/// `run_id`: trial id -> name -> value. Throws StoreError.
std::map<int64_t, std::map<std::string, double>> ReadSummaryMetrics(Store& store, int64_t run_id,
                                                                    const std::vector<std::string>& names);

/// One per-step metric row, e.g. auto_batch's `auto_batch.batch` of probe 3.
struct StepMetric {
  int64_t trial_id = 0;
  std::string name;
  int64_t step = 0;
  double value = 0;
};

/// The per-step metrics (step not NULL, value not NULL) of the trials of run `run_id` whose name
/// starts with `prefix` (taken literally), ordered by trial id, step and name. Throws StoreError.
std::vector<StepMetric> ReadStepMetrics(Store& store, int64_t run_id, const std::string& prefix);

}  // namespace runx::store
