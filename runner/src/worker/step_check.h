#pragma once
// Checking a training step that stands in for eager's (compiled_step's package, or any technique)
// by training with it: a few steps from the same weights and batches as the fp32 eager step, the
// reference, with the losses and the weights compared against the reference and read against a
// floor, the reference done another way that is the same arithmetic (the step without the
// technique in the trial's lower precision, or the fp32 step in the other memory format). Each
// run is a trial of its own, run by RunSweep into a throwaway results store, the way runx runs
// every trial. Prints nothing.
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runx/status.h"
#include "spec/spec.h"

namespace runx::engine {

struct StepCheckOptions {
  int steps = 3;             ///< training steps of each run (a first SGD step is the gradient's check)
  std::string work_dir;      ///< an empty folder for the runs' experiment files, store and weights
  std::string compiled_dir;  ///< where compiled_step's `package: auto` is looked for
  const std::atomic<bool>* interrupted = nullptr;
};

/// One of the check's runs: a trial of its own.
struct StepCheckRun {
  std::string role;        ///< "initial", "reference", "floor", "candidate"
  std::string what;        ///< what it runs, e.g. "without compiled_step, fp32 (TF32 off), contiguous"
  std::string experiment;  ///< the experiment file it ran (in the work folder)
  TrialStatus status = TrialStatus::kFailed;
  std::string error;           ///< why it is not ok
  std::vector<double> losses;  ///< of every training step
  std::string weights;         ///< the trained weights (export's weights.pt)
};

/// The judgement of the candidate against the reference. Losses: the largest relative difference
/// over the steps, |c - r| / |r|. Weights: sqrt(sum |c - r|^2) / sqrt(sum |r - w0|^2) over the
/// floating parameters, w0 the initial weights: the difference as a share of what training
/// changed. Each is within max(tolerance, 2 x the floor's own figure); the tolerance is 1e-3 for an
/// fp32 trial, 2e-2 for a lower precision.
struct StepCheckVerdict {
  bool ok = false;
  bool could_not_tell = false;  ///< the reference or the initial weights did not come out
  std::string reason;           ///< why it is not ok (a sentence); "" when ok
  std::string floor_name;       ///< "" when no floor could run (the bounds are the tolerance)
  double tolerance = 0;
  std::optional<double> loss_diff, loss_floor, loss_bound;
  std::optional<double> weight_diff, weight_floor, weight_bound;
};

struct StepCheckResult {
  std::vector<StepCheckRun> runs;
  StepCheckVerdict verdict;
};

/// Trains `candidate` (a trial's resolved config, as a plan holds it) against `without` (the same
/// trial without the step under check, e.g. without compiled_step) for `options.steps` steps each,
/// every run under the determinism technique (warn_only) with export's weights. Throws
/// std::invalid_argument for a config the check cannot run (not a training task), spec::SpecError
/// when a derived experiment is invalid, store::StoreError when the work folder's store fails.
StepCheckResult CheckStep(const nlohmann::json& candidate, const nlohmann::json& without,
                          const spec::SchemaSet& schemas, const StepCheckOptions& options);

/// The verdict from the runs' figures (pure; CheckStep's last step). `floor_losses` and
/// `floor_weights` absent: no floor ran. `weights_diff`: the candidate's update-relative weights
/// difference from the reference, absent when it could not be measured.
StepCheckVerdict JudgeStep(bool fp32, const std::vector<double>& reference_losses,
                           const std::vector<double>& candidate_losses, std::optional<double> weights_diff,
                           const std::string& floor_name, const std::optional<std::vector<double>>& floor_losses,
                           std::optional<double> floor_weights);

}  // namespace runx::engine
