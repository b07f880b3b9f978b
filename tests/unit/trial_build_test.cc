// The build phase on a tiny CPU model: data and model, optimizer, the runner's step and its wrapping.
#include "trial/build.h"

#include <gtest/gtest.h>

#include "trial_support.h"

namespace runx::engine {
namespace {

using testing::LoggingTechnique;
using testing::TinyConfig;
using testing::TrialHarness;

TEST(TrialBuild, OpensDataBuildsTheModelAndCallsOnModel) {
  std::vector<std::string> log;
  TrialHarness h;
  testing::AddTechnique(h, "logger", std::make_unique<LoggingTechnique>("logger", log));
  auto data = BuildModelAndData(h.trial, 3, h.active, h.ctx);
  ASSERT_TRUE(data && h.ctx.model_);
  EXPECT_EQ(h.ctx.data_, data.get());
  EXPECT_EQ(data->batch_size(), 4);
  EXPECT_EQ(testing::MetricOf(h.rec, "param_count"), static_cast<double>(models::ParameterCount(*h.ctx.model_)));
  EXPECT_EQ(log, std::vector<std::string>{"logger:on_model"});

  TrialHarness again;  // the same seed, the same initial weights
  BuildModelAndData(again.trial, 3, again.active, again.ctx);
  const auto a = h.ctx.model_->parameters(), b = again.ctx.model_->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
}

TEST(TrialBuild, OptimizerIsSgdUnlessAdamw) {
  torch::nn::Linear model(3, 2);
  auto sgd = MakeOptimizer(spec::TrialConfig::From(TinyConfig()).optimizer, *model);
  auto* s = dynamic_cast<torch::optim::SGD*>(sgd.get());
  ASSERT_NE(s, nullptr);
  const auto& so = static_cast<const torch::optim::SGDOptions&>(s->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(so.lr(), 0.05);
  EXPECT_DOUBLE_EQ(so.momentum(), 0.9);

  const auto adamw_config = spec::TrialConfig::From(TinyConfig(
      {{"train", {{"optimizer", {{"name", "adamw"}, {"lr", 0.01}, {"betas", {0.8, 0.99}}, {"eps", 1e-6}}}}}}));
  auto adamw = MakeOptimizer(adamw_config.optimizer, *model);
  auto* a = dynamic_cast<torch::optim::AdamW*>(adamw.get());
  ASSERT_NE(a, nullptr);
  const auto& ao = static_cast<const torch::optim::AdamWOptions&>(a->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(ao.lr(), 0.01);
  EXPECT_DOUBLE_EQ(std::get<0>(ao.betas()), 0.8);
  EXPECT_DOUBLE_EQ(ao.eps(), 1e-6);
  EXPECT_DOUBLE_EQ(ao.weight_decay(), 1e-2);
}

TEST(TrialBuild, TrainingStepUpdatesTheWeightsAndDropsTheGradients) {
  TrialHarness h;
  auto data = BuildModelAndData(h.trial, 3, h.active, h.ctx);
  h.ctx.optimizer_ = MakeOptimizer(h.trial.optimizer, *h.ctx.model_);
  Step step = BaseStep(*h.ctx.model_, h.ctx.optimizer_.get());
  const auto before = h.ctx.model_->parameters()[0].detach().clone();
  Batch b = data->Next();
  auto loss = step.forward(b);
  EXPECT_EQ(loss.dim(), 0);
  step.backward(loss);
  EXPECT_TRUE(h.ctx.model_->parameters()[0].grad().defined());
  step.update();
  EXPECT_FALSE(h.ctx.model_->parameters()[0].grad().defined());
  EXPECT_FALSE(torch::equal(before, h.ctx.model_->parameters()[0]));
}

TEST(TrialBuild, InferenceStepIsTheForwardPass) {
  TrialHarness h(TinyConfig({{"task", "infer"}}));
  auto data = BuildModelAndData(h.trial, 3, h.active, h.ctx);
  Step step = BaseStep(*h.ctx.model_, nullptr);
  Batch b = data->Next();
  auto logits = step.forward(b);
  EXPECT_EQ(logits.sizes().vec(), (std::vector<int64_t>{4, 5}));
  step.backward(logits);  // no-ops
  step.update();
}

TEST(TrialBuild, WrapsInAscendingWrapOrderListedOrderAmongEquals) {
  std::vector<std::string> log;
  TrialHarness h;
  testing::AddTechnique(h, "outer", std::make_unique<LoggingTechnique>("outer", log, 900));
  testing::AddTechnique(h, "a", std::make_unique<LoggingTechnique>("a", log, 100));
  testing::AddTechnique(h, "b", std::make_unique<LoggingTechnique>("b", log, 100));
  auto data = BuildModelAndData(h.trial, 3, h.active, h.ctx);
  h.ctx.optimizer_ = MakeOptimizer(h.trial.optimizer, *h.ctx.model_);
  log.clear();  // on_model
  Step step = WrapStep(BaseStep(*h.ctx.model_, h.ctx.optimizer_.get()), h.active, h.ctx);
  EXPECT_EQ(log, (std::vector<std::string>{"a:wrap_step", "b:wrap_step", "outer:wrap_step"}));
  log.clear();
  Batch batch = data->Next();
  step.forward(batch);
  EXPECT_EQ(log, (std::vector<std::string>{"outer:forward", "b:forward", "a:forward"}));
}

struct ThrowsInWrap : Technique {
  Step wrap_step(Step, TrialContext&) override { throw std::runtime_error("cannot wrap"); }
};

TEST(TrialBuild, AWrapFailureNamesTheTechnique) {
  TrialHarness h;
  testing::AddTechnique(h, "bad", std::make_unique<ThrowsInWrap>());
  try {
    WrapStep(Step{}, h.active, h.ctx);
    FAIL() << "no exception";
  } catch (const TechniqueFailure& e) {
    EXPECT_EQ(std::string(e.what()), "technique 'bad' failed in wrap_step: cannot wrap");
  }
}

}  // namespace
}  // namespace runx::engine
