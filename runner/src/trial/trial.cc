// RunTrial: the phases of one trial in order. Each phase lives in its own trial_*.cc.
#include "trial/trial.h"

#include <cmath>
#include <optional>

#include <torch/torch.h>

#include "machine/machine_state.h"
#include "trial/build.h"
#include "trial/context.h"
#include "trial/data_parallel.h"
#include "trial/device.h"
#include "trial/environment.h"
#include "trial/eval.h"
#include "trial/host_memory.h"
#include "trial/loader.h"
#include "trial/loop.h"
#include "trial/metrics.h"
#include "trial/record.h"
#include "trial/setup.h"

namespace runx::engine {
namespace {

/// The result of a finished loop: the technique's abort, non-finite loss, or the evaluation.
void Conclude(const StepPlan& plan, int64_t first_bad, data::DataSource& data, Step& step,
              std::vector<ActiveTechnique>& active, RunnerContext& ctx, store::TrialRecord& rec) {
  if (ctx.aborted()) {
    rec.status = *ctx.abort_status();
    rec.error = ctx.abort_why();
  } else if (first_bad >= 0) {
    rec.status = TrialStatus::kNan;
    rec.error = NonFiniteLossMessage(first_bad, plan.warmup);
  } else if (plan.eval) {
    auto* model = ctx.model_.get();
    const auto plain = [model](Batch& b) { return model->forward(b.input); };
    const auto e =
        plan.infer ? Evaluate(*model, data, active, ctx, step.forward) : Evaluate(*model, data, active, ctx, plain);
    if (e) RecordEvaluation(*e, data.sample_spec(), ctx);
  }
}

/// Build, wrap, train (or infer) and measure, evaluate, finish: everything after on_setup.
void BuildAndRun(const spec::TrialConfig& trial, uint64_t seed, std::vector<ActiveTechnique>& active,
                 RunnerContext& ctx, store::TrialRecord& rec, const TrialOptions& options) {
  auto data = BuildModelAndData(trial, seed, active, ctx);
  const bool infer = trial.infer;
  Step step;
  // Inference: no autograd from here on (the measured passes, probes, graph capture, accuracy).
  std::optional<c10::InferenceMode> inference_mode;
  if (infer) {
    ctx.model_->eval();
    inference_mode.emplace();
  } else {
    ctx.optimizer_ = MakeOptimizer(trial.optimizer, *ctx.model_);
  }
  step = WrapStep(BaseStep(*ctx.model_, ctx.optimizer_.get()), active, ctx);
  ctx.step_ = &step;

  // Last preparations (auto_batch probes here), then the loader.
  ctx.in_train_begin_ = true;
  ForEachTechnique(active, "on_train_begin", [&](Technique& t) { t.on_train_begin(ctx); });
  ctx.EndTrainBegin();
  if (ctx.aborted()) throw TrialAborted();
  TrialLoader loader = MakeTrialLoader(*data, ctx.device(), active, ctx);

  StepPlan plan = PlanSteps(trial, *data);
  ctx.metric("batch_size", static_cast<double>(plan.batch));
  if (Collectives* ranks = ctx.collectives()) {
    plan.ranks = ranks->world_size();
    plan.eval = plan.eval && ranks->rank() == 0;  // the ranks hold the same weights: one evaluates
    ctx.metric("global_batch_size", static_cast<double>(plan.batch * plan.ranks));
  }
  EnergyMeterOrWhy energy = OpenEnergyMeter(ctx.device());
  if (energy.meter)
    ctx.record("energy.source", energy.meter->source());
  else
    ctx.record("energy.absent", energy.why_not);
  LoopResult loop = RunSteps(plan, step, *loader.loader, active, ctx, options, energy.meter.get());
  rec.environment.merge(NoiseStateAfterMeasuring());  // the machine as the measured steps ended
  if (Collectives* ranks = ctx.collectives()) AverageOverRanks(*ranks, ctx.device(), loop.loss);
  const int64_t first_bad = RecordSteps(plan, loop, rec);
  RecordMeasurements(plan, loop, ctx);
  Conclude(plan, first_bad, *data, step, active, ctx, rec);
  inference_mode.reset();  // on_finish may export (tracing, freezing): outside inference mode
  ForEachTechnique(active, "on_finish", [&](Technique& t) { t.on_finish(ctx); });
}

/// `rec` ended before the trial began: failed, for `why`.
store::TrialRecord Failed(store::TrialRecord rec, const std::string& why) {
  rec.status = TrialStatus::kFailed;
  rec.error = why;
  rec.finished_at = UtcNow();
  return rec;
}

}  // namespace

store::TrialRecord RunTrial(const nlohmann::json& config, const plugins::Registry& registry,
                            const TrialOptions& options) {
  store::TrialRecord rec = StartRecord();
  std::vector<std::string> notes;
  c10::Device device(c10::DeviceType::CPU);
  spec::TrialConfig trial;  // the keys the phases read, typed, made once
  const RankRole* rank = nullptr;
  try {
    trial = spec::TrialConfig::From(config);
    rank = RankOf(trial, options.rank);
    device = SelectDevice(trial.device);
    if (rank) device = RankDevice(device, *rank);
  } catch (const spec::TrialConfigError& e) {
    return Failed(std::move(rec), e.what());
  } catch (const DeviceError& e) {
    return Failed(std::move(rec), e.what());
  }
  rec.device = device.str();
  rec.environment = TrialEnvironment(device);

  std::vector<ActiveTechnique> active;
  host_memory::Install();  // counts CPU tensors: peak host memory, and a limit when one is set
  RunnerContext ctx(config, trial, device, rec, notes, active);
  try {
    if (auto refusal = CreateTechniques(config, registry, device, active, rec.environment)) {
      rec.status = TrialStatus::kIncompatible;
      rec.error = *refusal;
      rec.finished_at = UtcNow();
      return rec;
    }
    if (trial.ranks() > 0) {
      if (!rank)
        throw TechniqueFailure(
            "data_parallel: the trial's ranks are processes that runx starts; "
            "it cannot run in runx's own process (--in-process)");
      ctx.collectives_ = JoinRanks(*rank, trial.ranks(), device, rec.environment);
    }
    // The experiment's seed, or determinism's own when it sets one: it then governs everything
    // seeded here (data, initial weights), not only what happens after its on_setup.
    const uint64_t seed = trial.trial_seed();
    SetNumerics(trial, device, seed);
    ForEachTechnique(active, "on_setup", [&](Technique& t) { t.on_setup(ctx); });
    // what the trial computes with: the experiment's `threads`, or determinism's
    rec.environment["intra_op_threads"] = std::to_string(at::get_num_threads());
    BuildAndRun(trial, seed, active, ctx, rec, options);
  } catch (...) {
    RecordFailure(std::current_exception(), ctx, rec);
  }
  FinishRecord(rec, notes);
  return rec;
}

}  // namespace runx::engine
