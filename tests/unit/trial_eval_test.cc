// The evaluation phase: accuracy and loss on the held-out split, in chunks, model mode restored.
#include "trial/eval.h"

#include <cmath>

#include <gtest/gtest.h>

#include "trial_support.h"

namespace runx::engine {
namespace {

using testing::TrialHarness;

/// A model whose logits are its input: the class with the largest input value wins.
struct Identity : models::Model {
  torch::Tensor forward(torch::Tensor x) override { return x; }
};

TEST(TrialEval, CountsHitsOverChunksOfTheHeldOutSplit) {
  std::vector<std::string> log;
  TrialHarness h;
  testing::AddTechnique(h, "log", std::make_unique<testing::LoggingTechnique>("log", log));
  testing::FixedData data({3}, 3, 4, 10);
  // 2500 samples, 3 classes: the first 2000 predict their label, the rest class 0 for label 2.
  const int64_t n = 2500;
  auto target = torch::full({n}, 2, torch::kLong);
  auto input = torch::nn::functional::one_hot(target, 3).to(torch::kFloat);
  input.narrow(0, 2000, 500).zero_();
  input.narrow(0, 2000, 500).select(1, 0).fill_(1);
  data.eval = Batch{input, target};
  Identity model;
  model.train();
  const auto forward = [&model](Batch& b) { return model.forward(b.input); };
  const auto e = Evaluate(model, data, h.active, h.ctx, forward);
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->accuracy, 0.8);
  EXPECT_EQ(e->positions, n);
  // Cross entropy of one-hot logits: log(e + 2) - 1 when right, log(e + 2) when wrong.
  const double right = std::log(std::exp(1.0) + 2) - 1, wrong = std::log(std::exp(1.0) + 2);
  EXPECT_NEAR(e->loss, 0.8 * right + 0.2 * wrong, 1e-6);
  EXPECT_EQ(log, (std::vector<std::string>(3, "log:on_batch")));  // chunks of 1000
  EXPECT_TRUE(model.is_training());
}

TEST(TrialEval, ALanguageModelIsScoredAtEveryPosition) {
  std::vector<std::string> log;
  TrialHarness h;
  testing::AddTechnique(h, "log", std::make_unique<testing::LoggingTechnique>("log", log));
  testing::FixedData data({64}, 5, 4, 10);
  // 600 sequences of 64 next-token targets over a vocabulary of 5; logits [N, 64, 5] one-hot on
  // target 1 everywhere; the targets are 1 except at position 0 of every sequence (0 there).
  const int64_t n = 600, t = 64;
  auto target = torch::ones({n, t}, torch::kLong);
  target.select(1, 0).zero_();
  auto logits = torch::zeros({n, t, 5});
  logits.select(2, 1).fill_(3.0);
  data.eval = Batch{logits, target};
  Identity model;
  const auto e = Evaluate(model, data, h.active, h.ctx, [&model](Batch& b) { return model.forward(b.input); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->positions, n * t);
  EXPECT_DOUBLE_EQ(e->accuracy, 63.0 / 64.0);
  const double z = std::log(std::exp(3.0) + 4);  // log-sum-exp of one 3 and four 0s
  EXPECT_NEAR(e->loss, (63.0 * (z - 3.0) + z) / 64.0, 1e-6);
  EXPECT_EQ(log.size(), 3u);  // chunks of 16384 / 64 = 256 sequences: 256, 256, 88

  // Recorded: accuracy, val_loss and, for token ids, the perplexity exp(val_loss).
  RecordEvaluation(*e, SampleSpec{{t}, c10::kLong, {t}, c10::kLong, 5}, h.ctx);
  EXPECT_DOUBLE_EQ(testing::MetricOf(h.rec, "val_loss"), e->loss);
  EXPECT_DOUBLE_EQ(testing::MetricOf(h.rec, "perplexity"), std::exp(e->loss));
  EXPECT_DOUBLE_EQ(testing::MetricOf(h.rec, "accuracy"), e->accuracy);
}

TEST(TrialEval, AClassifierHasNoPerplexity) {
  TrialHarness h;
  RecordEvaluation({0.5, 1.25, 10}, SampleSpec{{3}, c10::kFloat, {}, c10::kLong, 3}, h.ctx);
  EXPECT_DOUBLE_EQ(testing::MetricOf(h.rec, "val_loss"), 1.25);
  EXPECT_TRUE(std::isnan(testing::MetricOf(h.rec, "perplexity")));
}

TEST(TrialEval, NoHeldOutSplitNoEvaluation) {
  TrialHarness h;
  testing::FixedData data({3}, 3, 4, 10);
  Identity model;
  EXPECT_FALSE(Evaluate(model, data, h.active, h.ctx, [](Batch& b) { return b.input; }).has_value());
}

}  // namespace
}  // namespace runx::engine
