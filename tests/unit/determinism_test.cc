// determinism must change LibTorch's global state: the flags and thread count read back from
// at::globalContext() and at::get_num_threads() follow its parameters, and the generator is reseeded.
#include <cstdlib>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fake_trial.h"

namespace runx {
namespace {

struct Net : torch::nn::Module {
  Net() : fc(register_module("fc", torch::nn::Linear(4, 2))) {}
  torch::nn::Linear fc;
};

/// Saves LibTorch's global flags and restores them after each test.
class Determinism : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& c = at::globalContext();
    algorithms_ = c.deterministicAlgorithms();
    warn_only_ = c.deterministicAlgorithmsWarnOnly();
    cudnn_det_ = c.deterministicCuDNN();
    benchmark_ = c.benchmarkCuDNN();
    tf32_cublas_ = c.allowTF32CuBLAS();
    tf32_cudnn_ = c.allowTF32CuDNN();
    threads_ = at::get_num_threads();
  }
  void TearDown() override {
    auto& c = at::globalContext();
    c.setDeterministicAlgorithms(algorithms_, warn_only_);
    c.setDeterministicCuDNN(cudnn_det_);
    c.setBenchmarkCuDNN(benchmark_);
    c.setAllowTF32CuBLAS(tf32_cublas_);
    c.setAllowTF32CuDNN(tf32_cudnn_);
    at::set_num_threads(threads_);
  }
  /// Puts every flag in the state opposite to `deterministic`.
  static void Scramble(bool deterministic, int threads) {
    auto& c = at::globalContext();
    c.setDeterministicAlgorithms(!deterministic, false);
    c.setDeterministicCuDNN(!deterministic);
    c.setBenchmarkCuDNN(deterministic);
    c.setAllowTF32CuBLAS(deterministic);
    c.setAllowTF32CuDNN(deterministic);
    at::set_num_threads(threads);
  }
  bool algorithms_, warn_only_, cudnn_det_, benchmark_, tf32_cublas_, tf32_cudnn_;
  int threads_;
};

TEST_F(Determinism, SetsTheFlagsAndThreadsItIsGiven) {
  Scramble(/*deterministic=*/true, 2);
  testing::FakeTrial trial({{"seed", 3}, {"precision", "fp32"}}, std::make_shared<Net>());
  auto t = testing::LoadTechnique("determinism", {{"threads", 1}});
  t->on_setup(trial);
  auto& c = at::globalContext();
  EXPECT_TRUE(c.deterministicAlgorithms());
  EXPECT_FALSE(c.deterministicAlgorithmsWarnOnly());
  EXPECT_TRUE(c.deterministicCuDNN());
  EXPECT_FALSE(c.benchmarkCuDNN());
  EXPECT_FALSE(c.allowTF32CuBLAS());
  EXPECT_FALSE(c.allowTF32CuDNN());
  EXPECT_EQ(at::get_num_threads(), 1);
  // What it records is read back from LibTorch.
  EXPECT_EQ(trial.records["determinism.deterministic_algorithms"], "true");
  EXPECT_EQ(trial.records["determinism.cudnn_benchmark"], "false");
  EXPECT_EQ(trial.records["determinism.tf32_cublas"], "false");
  EXPECT_EQ(trial.records["determinism.threads"], "1");
  EXPECT_EQ(trial.records["determinism.seed"], "3");  // the experiment's seed by default
}

TEST_F(Determinism, TurnsThemTheOtherWayWhenTold) {
  Scramble(/*deterministic=*/false, 1);
  testing::FakeTrial trial({{"seed", 3}, {"precision", "tf32"}}, std::make_shared<Net>());
  auto t = testing::LoadTechnique("determinism", {{"deterministic_algorithms", false},
                                                  {"warn_only", true},
                                                  {"cudnn_deterministic", false},
                                                  {"cudnn_benchmark", true},
                                                  {"threads", 2}});
  t->on_setup(trial);
  auto& c = at::globalContext();
  EXPECT_FALSE(c.deterministicAlgorithms());
  EXPECT_FALSE(c.deterministicCuDNN());
  EXPECT_TRUE(c.benchmarkCuDNN());
  EXPECT_TRUE(c.allowTF32CuBLAS());  // precision tf32 and no tf32 parameter: on
  EXPECT_TRUE(c.allowTF32CuDNN());
  EXPECT_EQ(at::get_num_threads(), 2);
  EXPECT_EQ(trial.records["determinism.deterministic_algorithms"], "false");
  EXPECT_EQ(trial.records["determinism.tf32_cudnn"], "true");
  EXPECT_EQ(trial.records["determinism.threads"], "2");
}

TEST_F(Determinism, SeedsTheGeneratorAndReseedsUntilTheFirstStepEnds) {
  testing::FakeTrial trial({{"seed", 3}}, std::make_shared<Net>());
  auto t = testing::LoadTechnique("determinism", {{"seed", 11}});
  torch::manual_seed(11);
  const auto expected = torch::rand({4});
  torch::manual_seed(99);
  t->on_setup(trial);
  EXPECT_TRUE(torch::equal(torch::rand({4}), expected));
  EXPECT_EQ(trial.records["determinism.seed"], "11");
  // The runner reseeds with the experiment's seed to build data and model; the first batch is ours.
  torch::manual_seed(3);
  Batch b{torch::zeros({1, 4}), torch::zeros({1}, torch::kLong)};
  t->on_batch(b, trial);
  EXPECT_TRUE(torch::equal(torch::rand({4}), expected));
  t->on_step_end(StepStats{0, true, torch::zeros({})}, trial);
  torch::manual_seed(3);
  t->on_batch(b, trial);  // training under way: the stream is left alone
  torch::manual_seed(3);
  const auto three = torch::rand({4});
  torch::manual_seed(3);
  t->on_batch(b, trial);
  EXPECT_TRUE(torch::equal(torch::rand({4}), three));
}

TEST_F(Determinism, CheckDeclaresWhatItCannotServe) {
  const nlohmann::json no_tf32 = {{"tf32", false}};
  auto tf32 = testing::Check("determinism", no_tf32, {{"precision", "tf32"}}, torch::kCPU);
  EXPECT_FALSE(tf32.ok);
  EXPECT_EQ(tf32.reason, "precision 'tf32' conflicts with determinism tf32: false");
  EXPECT_TRUE(testing::Check("determinism", no_tf32, {{"precision", "fp32"}}, torch::kCPU).ok);

  const auto d = [](c10::Device device) {
    return testing::Check("determinism", nlohmann::json::object(), nlohmann::json::object(), device);
  };
  setenv("CUBLAS_WORKSPACE_CONFIG", ":0:0", 1);
  auto cublas = d(c10::Device(c10::DeviceType::CUDA, 0));
  unsetenv("CUBLAS_WORKSPACE_CONFIG");
  EXPECT_FALSE(cublas.ok);
  EXPECT_EQ(cublas.reason, "CUBLAS_WORKSPACE_CONFIG is ':0:0'; deterministic cuBLAS needs ':4096:8' or ':16:8'");
  EXPECT_TRUE(d(c10::Device(c10::DeviceType::CUDA, 0)).ok);

  auto mps = d(c10::Device(c10::DeviceType::MPS, 0));
  EXPECT_EQ(mps.ok, compat::kTorchVersion >= 201) << mps.reason;
}

}  // namespace
}  // namespace runx
