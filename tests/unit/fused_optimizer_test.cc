// fused_optimizer must do the optimizer's work itself: after K steps the weights equal those of
// torch::optim::SGD / AdamW run side by side from the same start, while the torch::optim
// optimizer that the plugin replaced holds no state at all (its step never ran).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fake_trial.h"

namespace runx {
namespace {

struct Mlp : torch::nn::Module {
  Mlp() : fc1(register_module("fc1", torch::nn::Linear(6, 5))), fc2(register_module("fc2", torch::nn::Linear(5, 3))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::tanh(fc1(x))); }
  torch::nn::Linear fc1, fc2;
};

/// A FakeTrial whose optimizer is the one given (FakeTrial's own is a plain SGD).
class OptTrial : public testing::FakeTrial {
 public:
  OptTrial(std::shared_ptr<torch::nn::Module> model, std::unique_ptr<torch::optim::Optimizer> opt)
      : FakeTrial(nlohmann::json::object(), std::move(model)), opt_(std::move(opt)) {}
  torch::optim::Optimizer& optimizer() override { return *opt_; }

 private:
  std::unique_ptr<torch::optim::Optimizer> opt_;
};

using MakeOpt = std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>)>;

/// Trains two copies of one model for `steps` steps on fixed data: one with `make`'s optimizer
/// stepping itself, one with the plugin's update in its place. Returns the plugin's trial.
std::unique_ptr<OptTrial> TrainSideBySide(const MakeOpt& make, const nlohmann::json& params, int steps,
                                          double* max_diff, bool ref_has_state = true) {
  torch::manual_seed(5);
  auto ref = std::make_shared<Mlp>(), mine = std::make_shared<Mlp>();
  {
    torch::NoGradGuard g;
    const auto from = ref->parameters(), to = mine->parameters();
    for (size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  }
  auto ref_opt = make(ref->parameters());
  const auto initial = ref->parameters()[0].detach().clone();
  auto trial = std::make_unique<OptTrial>(mine, make(mine->parameters()));
  auto plugin = testing::LoadTechnique("fused_optimizer", params);
  Step base;
  base.forward = [&](Batch& b) { return torch::nn::functional::cross_entropy(mine->forward(b.input), b.target); };
  base.backward = [](torch::Tensor& loss) { loss.backward(); };
  int builtin_steps = 0;
  base.update = [&] { trial->optimizer().step(), ++builtin_steps; };  // what the plugin must replace
  Step step = plugin->wrap_step(base, *trial);

  const auto x = torch::randn({16, 6}), y = torch::randint(3, {16}, torch::kLong);
  for (int i = 0; i < steps; ++i) {
    ref_opt->zero_grad();
    torch::nn::functional::cross_entropy(ref->forward(x), y).backward();
    ref_opt->step();
    Batch b{x, y};
    plugin->on_batch(b, *trial);
    auto loss = step.forward(b);
    step.backward(loss);
    step.update();
    for (auto& p : mine->parameters()) EXPECT_FALSE(p.grad().defined());  // set_to_none
    plugin->on_step_end(StepStats{i, false, loss.detach()}, *trial);
  }
  *max_diff = 0;
  const auto ref_params = ref->parameters(), my_params = mine->parameters();
  for (size_t i = 0; i < ref_params.size(); ++i) {
    const auto& a = ref_params[i];
    const auto& b = my_params[i];
    EXPECT_TRUE(torch::allclose(a, b, /*rtol=*/1e-5, /*atol=*/1e-6)) << "parameter " << i << "\n" << a << "\n" << b;
    *max_diff = std::max(*max_diff, (a - b).abs().max().item<double>());
  }
  EXPECT_FALSE(torch::allclose(initial, my_params[0]));  // it trained
  EXPECT_EQ(builtin_steps, 0);
  if (ref_has_state) EXPECT_FALSE(ref_opt->state().empty());  // the reference kept its state...
  EXPECT_TRUE(trial->optimizer().state().empty());            // ...the replaced optimizer never stepped
  return trial;
}

std::string ExpectedKernel(const std::string& asked) {
  if (asked == "foreach") return "foreach";
  return compat::FusedOptimizerSupported(c10::DeviceType::CPU, nullptr) ? "fused" : "foreach";
}

class FusedOptimizer : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedOptimizer, SgdMatchesTorchOptim) {
  for (bool nesterov : {false, true}) {
    MakeOpt make = [nesterov](std::vector<torch::Tensor> p) {
      return std::make_unique<torch::optim::SGD>(
          p, torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(1e-2).nesterov(nesterov));
    };
    double diff = 0;
    auto trial = TrainSideBySide(make, {{"kernel", GetParam()}}, 6, &diff);
    EXPECT_EQ(trial->records["fused_optimizer.kernel"], ExpectedKernel(GetParam()));
    EXPECT_EQ(trial->records["fused_optimizer.optimizer"], "sgd");
    std::printf("sgd nesterov=%d kernel=%s: max |difference| %.3g\n", nesterov,
                trial->records["fused_optimizer.kernel"].c_str(), diff);
  }
}

TEST_P(FusedOptimizer, SgdWithoutMomentumMatchesTorchOptim) {
  MakeOpt make = [](std::vector<torch::Tensor> p) {
    return std::make_unique<torch::optim::SGD>(p, torch::optim::SGDOptions(0.05).weight_decay(1e-3));
  };
  double diff = 0;
  TrainSideBySide(make, {{"kernel", GetParam()}}, 4, &diff, /*ref_has_state=*/false);  // plain SGD keeps none
}

TEST_P(FusedOptimizer, AdamWMatchesTorchOptim) {
  MakeOpt make = [](std::vector<torch::Tensor> p) {
    return std::make_unique<torch::optim::AdamW>(
        p, torch::optim::AdamWOptions(1e-2).weight_decay(0.05).betas({0.8, 0.99}).eps(1e-7));
  };
  double diff = 0;
  auto trial = TrainSideBySide(make, {{"kernel", GetParam()}}, 6, &diff);
  EXPECT_EQ(trial->records["fused_optimizer.optimizer"], "adamw");
  std::printf("adamw kernel=%s: max |difference| %.3g\n", trial->records["fused_optimizer.kernel"].c_str(), diff);
}

INSTANTIATE_TEST_SUITE_P(Kernels, FusedOptimizer, ::testing::Values("auto", "foreach"));

TEST(FusedOptimizerCheck, DeclaresWhatItCannotServe) {
  std::string why;
  const bool supported = compat::FusedOptimizerSupported(c10::DeviceType::CPU, &why);
  const nlohmann::json adamw = {{"train", {{"optimizer", {{"name", "adamw"}}}}}};
  auto r = testing::Check("fused_optimizer", {{"kernel", "fused"}}, adamw, torch::kCPU);
  EXPECT_EQ(r.ok, supported);
  if (!r.ok) EXPECT_EQ(r.reason, "kernel 'fused' on cpu: " + why);
  EXPECT_TRUE(testing::Check("fused_optimizer", {{"kernel", "foreach"}},
                             {{"train", {{"optimizer", {{"name", "sgd"}}}}}}, torch::kCPU)
                  .ok);
  auto infer = testing::Check("fused_optimizer", nlohmann::json::object(), {{"task", "infer"}}, torch::kCPU);
  EXPECT_FALSE(infer.ok);
}

// The kernel it decides is what other techniques read (cuda_graphs: only the fused AdamW counts
// its steps on the device) and what the trial's environment records.
TEST(FusedOptimizerCheck, ResolvesItsKernel) {
  const nlohmann::json adamw = {{"train", {{"optimizer", {{"name", "adamw"}}}}}};
  const bool fused = compat::FusedOptimizerSupported(c10::DeviceType::CPU, nullptr);
  EXPECT_EQ(testing::Resolve("fused_optimizer", {{"kernel", "auto"}}, adamw, torch::kCPU),
            (nlohmann::json{{"kernel", fused ? "fused" : "foreach"}, {"optimizer", "adamw"}}));
  EXPECT_EQ(testing::Resolve("fused_optimizer", {{"kernel", "foreach"}}, adamw, torch::kCPU).at("kernel"), "foreach");
  EXPECT_EQ(testing::Resolve("fused_optimizer", nlohmann::json::object(), nlohmann::json::object(), torch::kCPU)
                .at("optimizer"),
            "sgd");
}

}  // namespace
}  // namespace runx
