// amp must change what runs: the dtype ops produce under autocast, and a loss scale that moves.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fake_trial.h"

namespace runx {
namespace {

struct Net : torch::nn::Module {
  Net() : fc(register_module("fc", torch::nn::Linear(8, 4))) {}
  torch::nn::Linear fc;
};

struct Rig {
  explicit Rig(nlohmann::json params, double input_gain = 1.0, nlohmann::json config = {{"precision", "fp32"}})
      : gain(input_gain), net(std::make_shared<Net>()), trial(config, net), amp(testing::LoadTechnique("amp", params)) {
    amp->on_setup(trial);
    Step base;
    base.forward = [this](Batch& b) {
      auto out = net->fc(b.input);
      seen_dtype = out.scalar_type();
      return torch::nn::functional::cross_entropy(out, b.target);
    };
    base.backward = [](torch::Tensor& loss) { loss.backward(); };
    base.update = [this] {
      trial.optimizer().step();
      trial.optimizer().zero_grad();
    };
    step = amp->wrap_step(base, trial);
  }
  torch::Tensor Run() {
    Batch b{torch::randn({16, 8}) * gain, torch::randint(4, {16}, torch::kLong)};
    auto loss = step.forward(b);
    step.backward(loss);
    step.update();
    return loss;
  }
  double gain;
  std::shared_ptr<Net> net;
  testing::FakeTrial trial;
  std::unique_ptr<Technique> amp;
  Step step;
  c10::ScalarType seen_dtype = c10::kFloat;
};

TEST(Amp, AutocastsMatmulToBf16AndKeepsLossFp32) {
  Rig rig(nlohmann::json{{"dtype", "bf16"}});
  auto loss = rig.Run();
  EXPECT_EQ(rig.seen_dtype, c10::kBFloat16);                      // the Linear ran in bf16
  EXPECT_EQ(loss.scalar_type(), c10::kFloat);                     // cross_entropy autocasts to fp32
  EXPECT_FALSE(compat::IsAutocastEnabled(c10::DeviceType::CPU));  // the scope was closed
  Rig off(nlohmann::json{{"dtype", "bf16"}});
  EXPECT_EQ(off.net->fc(torch::randn({1, 8})).scalar_type(), c10::kFloat);  // outside the step: fp32
}

TEST(Amp, LossScaleBacksOffOnOverflowAndSkipsTheStep) {
  // Inputs of magnitude ~1000 give weight gradients ~100: scaled by 3e38 they overflow fp32, so
  // the first step must be skipped and the scale halved until the scaled gradients fit.
  Rig rig(nlohmann::json{{"dtype", "bf16"}, {"loss_scale", "dynamic"}, {"init_scale", 3e38}}, 1000.0);
  const auto before = rig.net->fc->weight.clone();
  rig.Run();
  EXPECT_DOUBLE_EQ(rig.trial.Last("loss_scale"), static_cast<double>(3e38f) * 0.5);
  EXPECT_TRUE(torch::equal(before, rig.net->fc->weight));  // skipped
  for (int i = 0; i < 30; ++i) rig.Run();
  EXPECT_LT(rig.trial.Last("loss_scale"), 1e38);
  EXPECT_FALSE(torch::equal(before, rig.net->fc->weight));  // later steps applied
  rig.amp->on_finish(rig.trial);
  EXPECT_GE(rig.trial.Last("amp_skipped_steps"), 1);
}

TEST(Amp, LossScaleGrowsAfterCleanInterval) {
  Rig rig(nlohmann::json{{"dtype", "bf16"}, {"loss_scale", "dynamic"}, {"init_scale", 4.0}, {"growth_interval", 2}});
  rig.Run();
  EXPECT_DOUBLE_EQ(rig.trial.Last("loss_scale"), 4.0);
  rig.Run();
  EXPECT_DOUBLE_EQ(rig.trial.Last("loss_scale"), 8.0);
}

TEST(Amp, Bf16HasNoLossScalingByDefault) {
  Rig rig(nlohmann::json{{"dtype", "bf16"}});
  rig.Run();
  EXPECT_TRUE(std::isnan(rig.trial.Last("loss_scale")));
}

TEST(Amp, CheckFollowsWhatThisLibTorchCanAutocast) {
  const nlohmann::json none = nlohmann::json::object();
  EXPECT_TRUE(testing::Check("amp", none, {{"precision", "bf16"}}, torch::kCPU).ok);
  auto fp16 = testing::Check("amp", none, {{"precision", "fp16"}}, torch::kCPU);
  EXPECT_EQ(fp16.ok, compat::AutocastSupported(c10::DeviceType::CPU, c10::kHalf, nullptr));
  if (!fp16.ok) EXPECT_NE(fp16.reason.find("fp16 on cpu"), std::string::npos) << fp16.reason;
  auto conflict = testing::Check("amp", {{"dtype", "bf16"}}, {{"precision", "fp16"}}, torch::kCPU);
  EXPECT_FALSE(conflict.ok);
  EXPECT_EQ(conflict.reason, "precision 'fp16' conflicts with amp dtype 'bf16'");
}

// What amp decides for `auto` is what cuda_graphs reads (a scaler reads the host every step).
TEST(Amp, ResolvesDtypeAndLossScale) {
  const nlohmann::json none = nlohmann::json::object();
  const auto resolved = [&](const nlohmann::json& params, const nlohmann::json& config) {
    const auto r = testing::Resolve("amp", params, config, torch::kCPU);
    return r.at("dtype").get<std::string>() + " " + r.at("loss_scale").dump();
  };
  EXPECT_EQ(resolved(none, {{"precision", "fp16"}}), "fp16 \"dynamic\"");
  EXPECT_EQ(resolved(none, {{"precision", "bf16"}}), "bf16 \"none\"");
  EXPECT_EQ(resolved(none, {{"precision", "fp32"}}), "bf16 \"none\"");
  EXPECT_EQ(resolved(none, {{"precision", "fp16"}, {"task", "infer"}}), "fp16 \"none\"");
  EXPECT_EQ(resolved({{"loss_scale", 128}}, {{"precision", "bf16"}}), "bf16 128");
  EXPECT_EQ(resolved({{"dtype", "fp16"}, {"loss_scale", "none"}}, {{"precision", "fp32"}}), "fp16 \"none\"");
}

TEST(Amp, InferenceAutocastsWithoutLossScaling) {
  const nlohmann::json infer = {{"precision", "fp32"}, {"task", "infer"}};
  auto asked = testing::Check("amp", {{"dtype", "bf16"}, {"loss_scale", "dynamic"}}, infer, torch::kCPU);
  EXPECT_FALSE(asked.ok);
  EXPECT_NE(asked.reason.find("task 'infer' has none"), std::string::npos) << asked.reason;
  EXPECT_TRUE(testing::Check("amp", {{"dtype", "bf16"}}, infer, torch::kCPU).ok);
  // A scale that training would apply (a fixed 8) is not applied to an inference pass: the step
  // keeps its own backward, and no scale is recorded; the forward pass is still autocast.
  Rig rig(nlohmann::json{{"dtype", "bf16"}, {"loss_scale", 8.0}}, 1.0, infer);
  rig.Run();
  EXPECT_EQ(rig.seen_dtype, c10::kBFloat16);
  EXPECT_TRUE(std::isnan(rig.trial.Last("loss_scale")));
  Rig train(nlohmann::json{{"dtype", "bf16"}, {"loss_scale", 8.0}});
  train.amp->on_finish(train.trial);
  EXPECT_EQ(train.trial.Last("loss_scale_final"), 8.0);  // the same parameters do scale in training
}

}  // namespace
}  // namespace runx
