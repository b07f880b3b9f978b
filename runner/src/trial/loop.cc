#include "trial/loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "trial/device.h"

namespace runx::engine {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

StepPlan PlanSteps(const spec::TrialConfig& trial, const data::DataSource& data) {
  StepPlan plan;
  plan.infer = trial.infer;
  plan.warmup = trial.steps.warmup_steps;
  plan.measured = trial.steps.steps;
  if (trial.steps.epochs)
    plan.measured = std::max<int64_t>(1, std::llround(*trial.steps.epochs * data.batches_per_epoch()));
  plan.total = plan.warmup + plan.measured;
  plan.per_epoch = data.batches_per_epoch();
  plan.batch = data.batch_size();
  if (const SampleSpec spec = data.sample_spec(); spec.tokens()) plan.tokens = spec.positions();
  plan.eval = trial.steps.eval;
  return plan;
}

LoopResult RunSteps(const StepPlan& plan, Step& step, Loader& loader, std::vector<ActiveTechnique>& active,
                    RunnerContext& ctx, const TrialOptions& options, EnergyMeter* energy) {
  const c10::Device device = ctx.device();
  const bool infer = plan.infer;
  StepTimer timer(device);
  std::vector<double> data_ms, latency_ms;  // latency: inference, each pass synchronized
  std::vector<torch::Tensor> losses;
  data_ms.reserve(plan.total);
  losses.reserve(plan.total);
  if (!infer) ctx.model_->train();
  const bool host_sync_ok = device.is_cpu();
  int64_t done = plan.total;
  std::optional<CpuSample> measure_begin;
  for (int64_t i = 0; i < plan.total; ++i) {
    const bool warmup = i < plan.warmup;
    if (i == plan.warmup) {
      Synchronize(device);
      ResetPeakMemory(device);
      measure_begin = SampleCpu();
      if (energy) energy->Start();
    }
    if (!infer) timer.Mark();  // inference times each synchronized pass on the host clock instead
    const auto t0 = Clock::now();
    Batch b = loader.next();
    ForEachTechnique(active, "on_batch", [&](Technique& t) { t.on_batch(b, ctx); });
    data_ms.push_back(MsSince(t0));
    torch::Tensor loss;
    if (infer) {
      step.forward(b);
      Synchronize(device);  // the output is there: one request's latency
      latency_ms.push_back(MsSince(t0));
    } else {
      loss = step.forward(b);
      step.backward(loss);
      step.update();
      losses.push_back(loss.detach());
    }
    StepStats st{i, warmup, infer ? torch::Tensor() : losses.back()};
    ForEachTechnique(active, "on_step_end", [&](Technique& t) { t.on_step_end(st, ctx); });
    if ((i + 1) % plan.per_epoch == 0)
      ForEachTechnique(active, "on_epoch_end", [&](Technique& t) { t.on_epoch_end(ctx); });
    if (ctx.aborted()) {
      done = i + 1;
      break;
    }
    if (options.on_step) options.on_step(i + 1, plan.total);
    if (options.on_progress && ((i + 1) % options.progress_every == 0 || i + 1 == plan.total)) {
      const bool read = !infer && (host_sync_ok || warmup);
      options.on_progress(
          {i + 1, plan.total, warmup, read ? loss.item<double>() : std::nan(""), PeakMemoryBytes(device)});
    }
  }
  if (!infer) timer.Mark();
  LoopResult out;
  out.done = done;
  out.step_ms = infer ? std::move(latency_ms) : timer.ElapsedMs();  // synchronizes once
  if (plan.warmup < done) {  // the device is done: every measured step's work is in
    if (energy) out.energy = energy->Stop();
    out.measure_begin = measure_begin;
    out.measure_end = measure_begin ? SampleCpu() : std::nullopt;
  }
  out.data_ms = std::move(data_ms);
  out.loss =
      infer ? torch::full({done}, std::nan(""), torch::kDouble) : torch::stack(losses).to(torch::kCPU, torch::kDouble);
  return out;
}

}  // namespace runx::engine
