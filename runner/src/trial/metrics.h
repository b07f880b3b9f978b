#pragma once
// What the step loop measured, written into the trial's record: per-step rows and trial metrics.
#include <cstdint>
#include <string>

#include "runx/plugin.h"
#include "store/store.h"
#include "trial/loop.h"

namespace runx::engine {

/// Appends one row per step done to rec.steps (phase warmup or measure, numbered within it; a
/// non-finite loss left empty). Returns the first training step whose loss is not finite, -1 if none.
int64_t RecordSteps(const StepPlan& plan, const LoopResult& loop, store::TrialRecord& rec);

/// Trial metrics of the measured steps: samples_per_s (pooled; for token data also tokens_per_s,
/// samples_per_s x tokens per sample), step_ms_median / p10 / p90 / p99 / mean, measured_s;
/// noise.other_cpus and noise.cpus (machine/cpu_load.h) where the machine's CPU use was sampled
/// over at least kMinLoadSpanS; energy_j, joules_per_sample and power_w where the loop's energy
/// meter read the measured steps (else the environment's energy.absent says why); then peak_mem_bytes,
/// reserved_mem_bytes where the device has a cache, and final_loss when finite.
void RecordMeasurements(const StepPlan& plan, const LoopResult& loop, TrialContext& ctx);

/// The error of a trial whose loss became non-finite at step `first_bad` (counting warm-up).
std::string NonFiniteLossMessage(int64_t first_bad, int64_t warmup);

}  // namespace runx::engine
