// The step loop on a tiny CPU model: planned steps, hooks per step, abort, progress.
#include "trial/loop.h"

#include <cmath>

#include <gtest/gtest.h>

#include "trial/build.h"
#include "trial/loader.h"
#include "trial_support.h"

namespace runx::engine {
namespace {

using testing::Count;
using testing::LoggingTechnique;
using testing::TinyConfig;
using testing::TrialHarness;

TEST(TrialLoop, PlanReadsTrainOrInfer) {
  testing::FixedData data({3}, 5, 4, 10);
  const auto train = PlanSteps(spec::TrialConfig::From(TinyConfig()), data);
  EXPECT_FALSE(train.infer);
  EXPECT_EQ(train.warmup, 2);
  EXPECT_EQ(train.measured, 6);
  EXPECT_EQ(train.total, 8);
  EXPECT_EQ(train.per_epoch, 10);
  EXPECT_EQ(train.batch, 4);
  EXPECT_TRUE(train.eval);

  const auto epochs = PlanSteps(spec::TrialConfig::From(TinyConfig({{"train", {{"epochs", 1.5}}}})), data);
  EXPECT_EQ(epochs.measured, 15);

  const auto infer =
      PlanSteps(spec::TrialConfig::From(TinyConfig({{"task", "infer"}, {"infer", {{"eval", false}}}})), data);
  EXPECT_TRUE(infer.infer);
  EXPECT_EQ(infer.warmup, 10);
  EXPECT_EQ(infer.measured, 100);
  EXPECT_FALSE(infer.eval);
}

/// A harness with the model, optimizer and wrapped step built, as the loop finds them.
struct Built {
  explicit Built(nlohmann::json config, std::vector<std::string>& log) : h(std::move(config)) {
    auto logger = std::make_unique<LoggingTechnique>("log", log);
    logger_ = logger.get();
    testing::AddTechnique(h, "log", std::move(logger));
    data = BuildModelAndData(h.trial, 3, h.active, h.ctx);
    if (!h.trial.infer) h.ctx.optimizer_ = MakeOptimizer(h.trial.optimizer, *h.ctx.model_);
    step = WrapStep(BaseStep(*h.ctx.model_, h.ctx.optimizer_.get()), h.active, h.ctx);
    loader = MakeTrialLoader(*data, torch::kCPU, h.active, h.ctx);
    plan = PlanSteps(h.trial, *data);
  }
  TrialHarness h;
  LoggingTechnique* logger_;
  std::unique_ptr<data::DataSource> data;
  Step step;
  TrialLoader loader;
  StepPlan plan;
};

TEST(TrialLoop, RunsEveryPlannedStepWithItsHooks) {
  std::vector<std::string> log;
  Built b(TinyConfig(), log);
  b.plan.per_epoch = 3;  // synthetic data has 100 batches per epoch
  std::vector<int64_t> done;
  int progress = 0;
  TrialOptions options;
  options.on_step = [&](int64_t d, int64_t total) {
    done.push_back(d);
    EXPECT_EQ(total, 8);
  };
  options.progress_every = 4;
  options.on_progress = [&](const Progress& p) {
    ++progress;
    EXPECT_TRUE(std::isfinite(p.loss));  // the CPU reads the loss for free
  };
  const auto loop = RunSteps(b.plan, b.step, *b.loader.loader, b.h.active, b.h.ctx, options);
  EXPECT_EQ(loop.done, 8);
  EXPECT_EQ(loop.step_ms.size(), 8u);
  EXPECT_EQ(loop.data_ms.size(), 8u);
  ASSERT_EQ(loop.loss.numel(), 8);
  EXPECT_EQ(loop.loss.scalar_type(), torch::kDouble);
  EXPECT_TRUE(torch::isfinite(loop.loss).all().item<bool>());
  EXPECT_EQ(Count(log, "log:on_batch"), 8);
  EXPECT_EQ(Count(log, "log:forward"), 8);
  EXPECT_EQ(Count(log, "log:on_step_end:warmup"), 2);
  EXPECT_EQ(Count(log, "log:on_step_end"), 6);
  EXPECT_EQ(Count(log, "log:on_epoch_end"), 2);
  EXPECT_EQ(done, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(progress, 2);
  EXPECT_TRUE(b.h.ctx.model_->is_training());
}

TEST(TrialLoop, SamplesTheMachinesCpuUseAroundTheMeasuredSteps) {
  std::vector<std::string> log;
  Built b(TinyConfig(), log);
  const auto before = SampleCpu();
  if (!before) GTEST_SKIP() << "no /proc/stat here";
  const auto loop = RunSteps(b.plan, b.step, *b.loader.loader, b.h.active, b.h.ctx, {});
  ASSERT_TRUE(loop.measure_begin.has_value());
  ASSERT_TRUE(loop.measure_end.has_value());
  EXPECT_LE(before->at, loop.measure_begin->at);
  EXPECT_LE(loop.measure_begin->at, loop.measure_end->at);
  EXPECT_LE(loop.measure_begin->self_s, loop.measure_end->self_s);

  Built warm(TinyConfig(), log);
  warm.logger_->abort_at = 0;  // in warm-up: nothing was measured
  const auto aborted = RunSteps(warm.plan, warm.step, *warm.loader.loader, warm.h.active, warm.h.ctx, {});
  EXPECT_EQ(aborted.done, 1);
  EXPECT_FALSE(aborted.measure_begin.has_value());
}

/// An energy meter that logs when it is started and stopped, and reads 1 J.
class LoggingMeter : public EnergyMeter {
 public:
  explicit LoggingMeter(std::vector<std::string>& log) : log_(log) {}
  std::string source() const override { return "logging"; }
  void Start() override { log_.push_back("meter:start"); }
  EnergyReading Stop() override {
    log_.push_back("meter:stop");
    return {EnergySpan{1.0, 0.5}, ""};
  }

 private:
  std::vector<std::string>& log_;
};

TEST(TrialLoop, TheEnergyMeterSpansTheMeasuredStepsOnly) {
  std::vector<std::string> log;
  Built b(TinyConfig(), log);
  LoggingMeter meter(log);
  const auto loop = RunSteps(b.plan, b.step, *b.loader.loader, b.h.active, b.h.ctx, {}, &meter);
  ASSERT_TRUE(loop.energy.has_value());
  EXPECT_DOUBLE_EQ(loop.energy->span->joules, 1.0);
  // started after the two warm-up steps, stopped after the last measured one
  std::vector<std::string> order;
  for (const auto& line : log)
    if (line == "meter:start" || line == "meter:stop" || line.rfind("log:on_step_end", 0) == 0) order.push_back(line);
  ASSERT_EQ(order.size(), 10u);
  EXPECT_EQ(order[0], "log:on_step_end:warmup");
  EXPECT_EQ(order[1], "log:on_step_end:warmup");
  EXPECT_EQ(order[2], "meter:start");
  EXPECT_EQ(order[9], "meter:stop");

  std::vector<std::string> warm_log;
  Built warm(TinyConfig(), warm_log);
  warm.logger_->abort_at = 0;  // in warm-up: nothing was measured, the meter never ran
  LoggingMeter idle(warm_log);
  const auto aborted = RunSteps(warm.plan, warm.step, *warm.loader.loader, warm.h.active, warm.h.ctx, {}, &idle);
  EXPECT_FALSE(aborted.energy.has_value());
  EXPECT_EQ(Count(warm_log, "meter:start"), 0);
}

TEST(TrialLoop, StopsAfterTheStepInWhichATechniqueAborted) {
  std::vector<std::string> log;
  Built b(TinyConfig(), log);
  b.logger_->abort_at = 3;
  const auto loop = RunSteps(b.plan, b.step, *b.loader.loader, b.h.active, b.h.ctx, {});
  EXPECT_EQ(loop.done, 4);
  EXPECT_EQ(loop.step_ms.size(), 4u);
  EXPECT_EQ(loop.loss.numel(), 4);
  EXPECT_EQ(b.h.ctx.abort_status(), TrialStatus::kFailed);
}

TEST(TrialLoop, InferenceTimesEachPassAndHasNoLoss) {
  std::vector<std::string> log;
  Built b(TinyConfig({{"task", "infer"}, {"infer", {{"warmup_steps", 1}, {"steps", 3}}}}), log);
  c10::InferenceMode guard;
  const auto loop = RunSteps(b.plan, b.step, *b.loader.loader, b.h.active, b.h.ctx, {});
  EXPECT_EQ(loop.done, 4);
  EXPECT_EQ(loop.step_ms.size(), 4u);
  EXPECT_TRUE(torch::isnan(loop.loss).all().item<bool>());
}

}  // namespace
}  // namespace runx::engine
