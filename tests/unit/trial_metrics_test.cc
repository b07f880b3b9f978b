// What the loop measured, written into the record: step rows, timing and memory metrics.
#include "trial/metrics.h"

#include <chrono>
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "trial_support.h"

namespace runx::engine {
namespace {

using testing::MetricOf;
using testing::TrialHarness;

StepPlan Plan(bool infer = false) {
  StepPlan p;
  p.infer = infer;
  p.warmup = 2;
  p.measured = 4;
  p.total = 6;
  p.per_epoch = 100;
  p.batch = 4;
  return p;
}

LoopResult Loop(std::vector<double> loss, std::vector<double> step_ms) {
  LoopResult l;
  l.done = static_cast<int64_t>(loss.size());
  l.step_ms = std::move(step_ms);
  l.data_ms.assign(loss.size(), 0.5);
  l.loss = torch::tensor(loss, torch::kDouble);
  return l;
}

TEST(TrialMetrics, StepRowsAreNumberedWithinTheirPhase) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  store::TrialRecord rec;
  const auto first_bad = RecordSteps(Plan(), Loop({1, nan, 2, inf, 3}, {9, 9, 1, 2, 3}), rec);
  EXPECT_EQ(first_bad, 1);
  ASSERT_EQ(rec.steps.size(), 5u);
  EXPECT_EQ(rec.steps[1].phase, "warmup");
  EXPECT_EQ(rec.steps[1].step, 1);
  EXPECT_FALSE(rec.steps[1].loss.has_value());
  EXPECT_EQ(rec.steps[2].phase, "measure");
  EXPECT_EQ(rec.steps[2].step, 0);
  EXPECT_EQ(rec.steps[2].loss, 2.0);
  EXPECT_EQ(rec.steps[2].wall_ms, 1.0);
  EXPECT_EQ(rec.steps[2].data_ms, 0.5);
  EXPECT_EQ(rec.steps[2].samples, 4);
  EXPECT_FALSE(rec.steps[3].loss.has_value());
}

TEST(TrialMetrics, InferenceHasNoNonFiniteLoss) {
  const double nan = std::nan("");
  store::TrialRecord rec;
  EXPECT_EQ(RecordSteps(Plan(true), Loop({nan, nan, nan}, {1, 1, 1}), rec), -1);
  EXPECT_EQ(rec.steps.size(), 3u);
}

TEST(TrialMetrics, TimingsOfTheMeasuredStepsOnly) {
  TrialHarness h;
  RecordMeasurements(Plan(), Loop({4, 3, 2, 1, 1, 0.5}, {100, 100, 1, 2, 3, 4}), h.ctx);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "samples_per_s"), 16 * 1000.0 / 10);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "step_ms_median"), 2.5);
  EXPECT_NEAR(MetricOf(h.rec, "step_ms_p10"), 1.3, 1e-12);
  EXPECT_NEAR(MetricOf(h.rec, "step_ms_p90"), 3.7, 1e-12);
  EXPECT_NEAR(MetricOf(h.rec, "step_ms_p99"), 3.97, 1e-12);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "step_ms_mean"), 2.5);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "measured_s"), 0.01);
  EXPECT_GT(MetricOf(h.rec, "peak_mem_bytes"), 0);
  EXPECT_TRUE(std::isnan(MetricOf(h.rec, "reserved_mem_bytes")));  // the CPU has no cache
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "final_loss"), 0.5);
  EXPECT_TRUE(std::isnan(MetricOf(h.rec, "tokens_per_s")));  // not token data
}

TEST(TrialMetrics, TokenDataCountsTokensToo) {
  TrialHarness h;
  StepPlan plan = Plan();
  plan.tokens = 128;  // seq_len: every sample is 128 next-token predictions
  RecordMeasurements(plan, Loop({4, 3, 2, 1, 1, 0.5}, {100, 100, 1, 2, 3, 4}), h.ctx);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "samples_per_s"), 16 * 1000.0 / 10);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "tokens_per_s"), 16 * 128 * 1000.0 / 10);
  bool unit = false;
  for (const auto& m : h.rec.metrics)
    if (m.name == "tokens_per_s") unit = m.unit == "tokens/s";
  EXPECT_TRUE(unit);
}

TEST(TrialMetrics, AbortedInWarmUpHasNoTimingsAndANonFiniteLastLossIsLeftOut) {
  TrialHarness h;
  RecordMeasurements(Plan(), Loop({1, std::nan("")}, {5, 5}), h.ctx);
  EXPECT_TRUE(std::isnan(MetricOf(h.rec, "samples_per_s")));
  EXPECT_TRUE(std::isnan(MetricOf(h.rec, "final_loss")));
  EXPECT_GT(MetricOf(h.rec, "peak_mem_bytes"), 0);
}

TEST(TrialMetrics, WhatOtherProcessesDidWhileTheStepsWereMeasured) {
  TrialHarness h;
  LoopResult loop = Loop({4, 3, 2, 1, 1, 0.5}, {100, 100, 1, 2, 3, 4});
  CpuSample begin, end;
  end.at = begin.at + std::chrono::seconds(2);
  end.busy_s = begin.busy_s + 3.5;  // the whole machine: 3.5 CPU-seconds in 2 s
  end.self_s = begin.self_s + 2.0;  // of which this trial's process 2
  loop.measure_begin = begin;
  loop.measure_end = end;
  RecordMeasurements(Plan(), loop, h.ctx);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "noise.other_cpus"), 0.75);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "noise.trial_cpus"), 1.0);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "noise.cpus"), OnlineCpus());
  for (const auto& m : h.rec.metrics)
    if (m.name.rfind("noise.", 0) == 0) EXPECT_EQ(m.unit, "cpus") << m.name;
}

TEST(TrialMetrics, NoLoadWithoutBothSamplesOrOverTooShortASpan) {
  CpuSample begin, end;
  end.at = begin.at + std::chrono::seconds(1);
  LoopResult ended_in_warmup = Loop({1, 2}, {5, 5});  // no sample when measuring began
  ended_in_warmup.measure_end = end;
  TrialHarness a;
  RecordMeasurements(Plan(), ended_in_warmup, a.ctx);
  EXPECT_TRUE(std::isnan(MetricOf(a.rec, "noise.other_cpus")));
  EXPECT_TRUE(std::isnan(MetricOf(a.rec, "noise.cpus")));

  LoopResult fast = Loop({4, 3, 2, 1, 1, 0.5}, {100, 100, 1, 2, 3, 4});
  end.at = begin.at + std::chrono::milliseconds(10);  // /proc/stat's 10 ms units cannot tell
  fast.measure_begin = begin;
  fast.measure_end = end;
  TrialHarness b;
  RecordMeasurements(Plan(), fast, b.ctx);
  EXPECT_TRUE(std::isnan(MetricOf(b.rec, "noise.other_cpus")));
  EXPECT_GT(MetricOf(b.rec, "samples_per_s"), 0);
}

TEST(TrialMetrics, EnergyPerSampleAndAverageWattsOfTheMeasuredSteps) {
  TrialHarness h;
  LoopResult loop = Loop({4, 3, 2, 1, 1, 0.5}, {100, 100, 1, 2, 3, 4});
  loop.energy = EnergyReading{EnergySpan{48.0, 2.0}, ""};  // 48 J over 2 s of 4 measured steps of 4
  RecordMeasurements(Plan(), loop, h.ctx);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "energy_j"), 48.0);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "joules_per_sample"), 3.0);
  EXPECT_DOUBLE_EQ(MetricOf(h.rec, "power_w"), 24.0);
  EXPECT_EQ(h.rec.environment.count("energy.absent"), 0u);
}

TEST(TrialMetrics, NoEnergyFiguresWhereTheMeterHadNoneAndTheReasonIsKept) {
  TrialHarness h;
  LoopResult loop = Loop({4, 3, 2, 1, 1, 0.5}, {100, 100, 1, 2, 3, 4});
  loop.energy = EnergyReading{std::nullopt, "the measured steps lasted 0.01 s, under the 0.5 s a reading needs"};
  RecordMeasurements(Plan(), loop, h.ctx);
  EXPECT_TRUE(std::isnan(MetricOf(h.rec, "joules_per_sample")));
  EXPECT_TRUE(std::isnan(MetricOf(h.rec, "power_w")));
  EXPECT_EQ(h.rec.environment["energy.absent"], "the measured steps lasted 0.01 s, under the 0.5 s a reading needs");
}

TEST(TrialMetrics, NonFiniteLossNamesThePhaseAndStep) {
  EXPECT_EQ(NonFiniteLossMessage(1, 2), "loss became non-finite at warm-up step 1");
  EXPECT_EQ(NonFiniteLossMessage(5, 2), "loss became non-finite at measured step 3");
}

}  // namespace
}  // namespace runx::engine
