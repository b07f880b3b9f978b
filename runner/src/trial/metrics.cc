#include "trial/metrics.h"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "base/statistics.h"
#include "machine/cpu_load.h"
#include "trial/data_parallel.h"
#include "trial/device.h"

namespace runx::engine {
namespace {

void RecordTimings(const StepPlan& plan, const LoopResult& loop, TrialContext& ctx) {
  std::vector<double> measured_ms;
  double measured_total = 0;
  for (int64_t i = plan.warmup; i < loop.done; ++i) {
    measured_ms.push_back(loop.step_ms[i]);
    measured_total += loop.step_ms[i];
  }
  if (measured_ms.empty()) return;
  const auto n = static_cast<int64_t>(measured_ms.size());
  double samples_per_s = static_cast<double>(plan.batch * n) * 1000.0 / measured_total;
  if (Collectives* ranks = ctx.collectives()) {  // data-parallel: every rank's samples, summed
    ctx.metric("rank_samples_per_s", samples_per_s, "samples/s");
    samples_per_s = SumOverRanks(*ranks, ctx.device(), samples_per_s);
  }
  ctx.metric("samples_per_s", samples_per_s, "samples/s");
  if (plan.tokens > 0) ctx.metric("tokens_per_s", samples_per_s * static_cast<double>(plan.tokens), "tokens/s");
  ctx.metric("step_ms_median", base::Percentile(measured_ms, 0.5), "ms");
  ctx.metric("step_ms_p10", base::Percentile(measured_ms, 0.1), "ms");
  ctx.metric("step_ms_p90", base::Percentile(measured_ms, 0.9), "ms");
  ctx.metric("step_ms_p99", base::Percentile(measured_ms, 0.99), "ms");
  ctx.metric("step_ms_mean", measured_total / static_cast<double>(n), "ms");
  ctx.metric("measured_s", measured_total / 1000.0, "s");
}

// What other processes did while the steps were measured. In a data-parallel trial rank 0 records
// it, and the sibling ranks on its host count among the others: they are other processes, and what
// they compute competes for the same cores.
void RecordLoad(const LoopResult& loop, TrialContext& ctx) {
  if (!loop.measure_begin || !loop.measure_end) return;
  const auto load = LoadBetween(*loop.measure_begin, *loop.measure_end, OnlineCpus());
  if (!load) return;
  ctx.metric("noise.other_cpus", load->other_cpus, "cpus");
  ctx.metric("noise.cpus", load->cpus, "cpus");
  ctx.metric("noise.trial_cpus", load->self_cpus, "cpus");
}

// The energy of the measured steps: energy_j, joules_per_sample and power_w, or why there are none
// (the environment's energy.absent). Data-parallel: the energy of every rank's device, summed,
// over every rank's samples; none when a rank has none.
void RecordEnergy(const StepPlan& plan, const LoopResult& loop, TrialContext& ctx) {
  if (loop.done <= plan.warmup) return;
  const std::optional<EnergySpan> span = loop.energy ? loop.energy->span : std::nullopt;
  double joules = span ? span->joules : std::nan("");
  if (Collectives* ranks = ctx.collectives()) joules = SumOverRanks(*ranks, ctx.device(), joules);
  if (!std::isfinite(joules) || !span) {
    if (loop.energy && !loop.energy->why_not.empty())
      ctx.record("energy.absent", loop.energy->why_not);
    else if (span)
      ctx.record("energy.absent", "another rank has no energy reading");
    return;
  }
  const auto samples = static_cast<double>(plan.batch * (loop.done - plan.warmup) * plan.ranks);
  ctx.metric("energy_j", joules, "J");
  ctx.metric("joules_per_sample", joules / samples, "J/sample");
  ctx.metric("power_w", joules / span->seconds, "W");
}

}  // namespace

int64_t RecordSteps(const StepPlan& plan, const LoopResult& loop, store::TrialRecord& rec) {
  const auto* lv = loop.loss.data_ptr<double>();
  int64_t first_bad = -1;
  for (int64_t i = 0; i < loop.done; ++i) {
    const bool warmup = i < plan.warmup;
    store::StepRow r{warmup ? "warmup" : "measure",
                     warmup ? i : i - plan.warmup,
                     loop.step_ms[i],
                     loop.data_ms[i],
                     plan.batch * plan.ranks,
                     lv[i]};
    if (!std::isfinite(lv[i])) r.loss.reset();
    if (!std::isfinite(lv[i]) && first_bad < 0 && !plan.infer) first_bad = i;
    rec.steps.push_back(r);
  }
  return first_bad;
}

void RecordMeasurements(const StepPlan& plan, const LoopResult& loop, TrialContext& ctx) {
  RecordTimings(plan, loop, ctx);
  RecordLoad(loop, ctx);
  RecordEnergy(plan, loop, ctx);
  const c10::Device device = ctx.device();
  ctx.metric("peak_mem_bytes", static_cast<double>(PeakMemoryBytes(device)), "bytes");
  if (const int64_t reserved = ReservedMemoryBytes(device); reserved >= 0)
    ctx.metric("reserved_mem_bytes", static_cast<double>(reserved), "bytes");
  const double last = loop.loss.data_ptr<double>()[loop.done - 1];
  if (std::isfinite(last)) ctx.metric("final_loss", last);
}

std::string NonFiniteLossMessage(int64_t first_bad, int64_t warmup) {
  return fmt::format("loss became non-finite at {} step {}", first_bad < warmup ? "warm-up" : "measured",
                     first_bad < warmup ? first_bad : first_bad - warmup);
}

}  // namespace runx::engine
