// anomaly must see what is in the step: ratios that match hand-computed values, a skipped update
// that leaves the weights as they were, an abort that names what went non-finite.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fake_trial.h"

namespace runx {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// One parameter of 4 elements; loss = sum(w * x), so the gradient of w is x.
struct Net : torch::nn::Module {
  Net() : w(register_parameter("w", torch::ones({4}))) {}
  torch::Tensor forward(const torch::Tensor& x) { return w * x; }
  torch::Tensor w;
};

struct Rig {
  explicit Rig(nlohmann::json params, nlohmann::json config = nlohmann::json::object())
      : net(std::make_shared<Net>()),
        trial(std::move(config), net),
        anomaly(testing::LoadTechnique("anomaly", params)) {
    trial.forward_fn = [this](const torch::Tensor& x) { return net->forward(x); };
    Step base;
    base.forward = [this](Batch& b) { return net->forward(b.input).sum(); };
    base.backward = [this](torch::Tensor& loss) {
      loss.backward();
      if (poison.defined()) {  // the gradient as the test wants it
        torch::NoGradGuard g;
        net->w.mutable_grad().copy_(poison);
      }
    };
    base.update = [this] {
      trial.optimizer().step();
      for (auto& p : net->parameters()) p.mutable_grad() = torch::Tensor();
    };
    step = anomaly->wrap_step(base, trial);
  }
  /// One step on input `x` (the gradient of w), with on_step_end as the runner calls it.
  torch::Tensor Run(const torch::Tensor& x) {
    Batch b{x, torch::zeros({1}, torch::kLong)};
    auto loss = step.forward(b);
    step.backward(loss);
    step.update();
    anomaly->on_step_end(StepStats{index, false, loss.detach()}, trial);
    ++index;
    return loss;
  }
  /// The value of metric `name` recorded at `step`, NaN if none.
  double At(const std::string& name, int64_t step) const {
    for (const auto& m : trial.metrics)
      if (m.name == name && m.step == step) return m.value;
    return std::nan("");
  }
  std::shared_ptr<Net> net;
  testing::FakeTrial trial;
  std::unique_ptr<Technique> anomaly;
  Step step;
  torch::Tensor poison;
  int64_t index = 0;
};

TEST(Anomaly, WarnRecordsRatiosAndMeansAsComputedByHand) {
  Rig rig(nlohmann::json{{"on_anomaly", "warn"}});
  rig.Run(torch::tensor({1.0f, 2.0f, 3.0f, 6.0f}));
  EXPECT_EQ(rig.At("anomaly.grad_nan_ratio", 0), 0.0);
  EXPECT_DOUBLE_EQ(rig.At("anomaly.grad_mean", 0), 3.0);
  EXPECT_DOUBLE_EQ(rig.At("anomaly.loss_mean", 0), 12.0);  // w = 1: sum(x)
  EXPECT_TRUE(rig.trial.notes.empty());

  rig.poison = torch::tensor({1.0f, kNaN, 2.0f, 6.0f});  // 1 of 4 NaN; the finite ones average 3
  rig.Run(torch::ones({4}));
  EXPECT_DOUBLE_EQ(rig.At("anomaly.grad_nan_ratio", 1), 0.25);
  EXPECT_DOUBLE_EQ(rig.At("anomaly.grad_inf_ratio", 1), 0.0);
  EXPECT_DOUBLE_EQ(rig.At("anomaly.grad_mean", 1), 3.0);
  EXPECT_DOUBLE_EQ(rig.At("anomaly.found", 1), 1.0);
  ASSERT_EQ(rig.trial.notes.size(), 1u);
  EXPECT_EQ(rig.trial.notes[0], "anomaly: gradients: NaN ratio 0.25, Inf ratio 0 at step 1");
  EXPECT_TRUE(std::isnan(rig.net->w[1].item<float>()));  // warn does not stop the update

  rig.poison = torch::tensor({kInf, kNaN, -kInf, 2.0f});
  rig.Run(torch::ones({4}));  // the loss is NaN now (w is), and named first
  EXPECT_DOUBLE_EQ(rig.At("anomaly.loss_nan_ratio", 2), 1.0);
  EXPECT_DOUBLE_EQ(rig.At("anomaly.grad_nan_ratio", 2), 0.25);
  EXPECT_DOUBLE_EQ(rig.At("anomaly.grad_inf_ratio", 2), 0.5);
  EXPECT_DOUBLE_EQ(rig.At("anomaly.grad_mean", 2), 2.0);
  EXPECT_EQ(rig.trial.notes.back(), "anomaly: loss: NaN ratio 1, Inf ratio 0 at step 2");
  rig.anomaly->on_finish(rig.trial);
  EXPECT_EQ(rig.trial.Last("anomaly.checked_steps"), 3);
  EXPECT_EQ(rig.trial.Last("anomaly.anomalous_steps"), 2);
}

TEST(Anomaly, SkipStepLeavesTheWeightsAndDropsTheGradients) {
  Rig rig(nlohmann::json{{"on_anomaly", "skip_step"}});
  auto before = rig.net->w.detach().clone();
  rig.Run(torch::ones({4}));
  EXPECT_FALSE(torch::equal(before, rig.net->w));  // a healthy step changes them
  before = rig.net->w.detach().clone();
  rig.poison = torch::tensor({0.5f, 0.5f, kNaN, 0.5f});
  rig.Run(torch::ones({4}));
  EXPECT_TRUE(torch::equal(before, rig.net->w));  // skipped
  EXPECT_FALSE(rig.net->w.grad().defined());
  EXPECT_EQ(rig.trial.notes.back(),
            "anomaly: gradients: NaN ratio 0.25, Inf ratio 0 at step 1; optimizer update skipped");
  rig.poison = torch::Tensor();
  rig.Run(torch::ones({4}));
  EXPECT_FALSE(torch::equal(before, rig.net->w));  // and training goes on
  rig.anomaly->on_finish(rig.trial);
  EXPECT_EQ(rig.trial.Last("anomaly.skipped_steps"), 1);
  EXPECT_TRUE(rig.trial.abort_status.empty());
}

TEST(Anomaly, AbortEndsTheTrialAsNanNamingWhatAndWhen) {
  Rig rig(nlohmann::json{{"on_anomaly", "abort"}});
  rig.Run(torch::ones({4}));
  EXPECT_TRUE(rig.trial.abort_status.empty());
  rig.poison = torch::tensor({kNaN, 1.0f, 1.0f, 1.0f});
  rig.Run(torch::ones({4}));
  EXPECT_EQ(rig.trial.abort_status, "nan");
  EXPECT_EQ(rig.trial.abort_why, "anomaly: gradients: NaN ratio 0.25, Inf ratio 0 at step 1");
}

TEST(Anomaly, ChecksEveryNthStepOnly) {
  Rig rig(nlohmann::json{{"every", 2}, {"per_parameter", true}});
  for (int i = 0; i < 5; ++i) rig.Run(torch::ones({4}));
  for (int64_t s : {0, 2, 4}) EXPECT_EQ(rig.At("anomaly.grad_nan_ratio", s), 0.0) << s;
  for (int64_t s : {1, 3}) EXPECT_TRUE(std::isnan(rig.At("anomaly.grad_nan_ratio", s))) << s;
  EXPECT_DOUBLE_EQ(rig.At("anomaly.grad.w.mean", 2), 1.0);
}

TEST(Anomaly, ActivationsCheckTheLogits) {
  Rig rig(nlohmann::json{{"activations", true}});
  rig.Run(torch::tensor({1.0f, kInf, 3.0f, 4.0f}));  // logits w * x: one Inf of 4
  EXPECT_DOUBLE_EQ(rig.At("anomaly.logits_inf_ratio", 0), 0.25);
  EXPECT_DOUBLE_EQ(rig.At("anomaly.logits_mean", 0), 8.0 / 3.0);
  EXPECT_EQ(rig.trial.notes.back(), "anomaly: loss: NaN ratio 0, Inf ratio 1 at step 0");
}

TEST(Anomaly, IncompatibleWithCudaGraphs) {
  EXPECT_TRUE(testing::Check("anomaly", nlohmann::json::object(), nlohmann::json::object(), torch::kCPU).ok);
  auto r = testing::Check("anomaly", nlohmann::json::object(),
                          {{"optimizations", {{"cuda_graphs", nlohmann::json::object()}}}}, torch::kCPU);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("cuda_graphs"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace runx
