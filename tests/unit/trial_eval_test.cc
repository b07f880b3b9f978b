// The evaluation phase: accuracy on the held-out split, in chunks, model mode restored.
#include "engine/trial_eval.h"

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
  EXPECT_DOUBLE_EQ(Accuracy(model, data, h.active, h.ctx, forward), 0.8);
  EXPECT_EQ(log, (std::vector<std::string>(3, "log:on_batch")));  // chunks of 1000
  EXPECT_TRUE(model.is_training());
}

TEST(TrialEval, NoHeldOutSplitIsNan) {
  TrialHarness h;
  testing::FixedData data({3}, 3, 4, 10);
  Identity model;
  EXPECT_TRUE(std::isnan(Accuracy(model, data, h.active, h.ctx, [](Batch& b) { return b.input; })));
}

}  // namespace
}  // namespace runx::engine
