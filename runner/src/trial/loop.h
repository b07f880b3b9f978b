#pragma once
// The step loop of a trial: warm-up steps (recorded, flagged), then measured ones.
#include <cstdint>
#include <optional>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "data/data.h"
#include "machine/cpu_load.h"
#include "machine/energy.h"
#include "runx/plugin.h"
#include "spec/trial_config.h"
#include "trial/context.h"
#include "trial/trial.h"

namespace runx::engine {

/// How many steps a trial runs, read from `train` (or `infer` for task: infer).
struct StepPlan {
  bool infer = false;
  int64_t warmup = 0;     ///< warmup_steps: 5 for training, 10 for inference by default
  int64_t measured = 0;   ///< steps (50 / 100 by default), or train.epochs x batches per epoch, at least 1
  int64_t total = 0;      ///< warmup + measured
  int64_t per_epoch = 0;  ///< batches per epoch: on_epoch_end after each such many steps
  int64_t batch = 0;      ///< samples per step (of this process: a data-parallel rank's shard)
  int64_t ranks = 1;      ///< data-parallel ranks: each step trains on batch x ranks samples in all
  int64_t tokens = 0;     ///< token data: tokens per sample (seq_len), for tokens_per_s; else 0
  bool eval = true;       ///< accuracy on the held-out split afterwards
};

/// The plan of `trial` on `data` (after on_train_begin: auto_batch may have changed the batch).
StepPlan PlanSteps(const spec::TrialConfig& trial, const data::DataSource& data);

/// What the loop measured: `done` steps (fewer than planned when a technique aborted).
struct LoopResult {
  int64_t done = 0;
  std::vector<double> step_ms;  ///< training: device time per step; inference: synchronized latency
  std::vector<double> data_ms;  ///< host time to get the batch and run on_batch
  torch::Tensor loss;           ///< [done] CPU doubles; NaN for inference
  /// The machine's CPU use when the measured steps began and once they had ended (the device
  /// synchronized): what other processes did meanwhile. Unset when /proc/stat cannot be read;
  /// no `measure_begin` when the trial ended in warm-up.
  std::optional<CpuSample> measure_begin, measure_end;
  /// The energy of the measured steps, by the meter RunSteps was given; unset without a meter or
  /// when the trial ended in warm-up.
  std::optional<EnergyReading> energy;
};

/// Runs the plan: per step a batch from `loader`, on_batch, the step, on_step_end and on_epoch_end;
/// peak memory is reset, the machine's CPU use sampled and `energy` (if any) started when the
/// measured steps begin; once they have ended (the device synchronized) `energy` is stopped. Stops
/// after a step in which a technique aborted. Reports progress through `options`; reads the loss
/// for it only on the CPU or in warm-up, where that costs nothing.
LoopResult RunSteps(const StepPlan& plan, Step& step, Loader& loader, std::vector<ActiveTechnique>& active,
                    RunnerContext& ctx, const TrialOptions& options, EnergyMeter* energy = nullptr);

}  // namespace runx::engine
