// RunnerContext::probe_batch on a tiny CPU model: timed, undone afterwards, out of memory reported.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../remove_tree.h"
#include "trial/build.h"
#include "trial/host_memory.h"
#include "trial_support.h"

namespace runx::engine {
namespace {

using testing::TrialHarness;

struct Probing {
  explicit Probing(nlohmann::json config = testing::TinyConfig()) : h(std::move(config)) {
    data = BuildModelAndData(h.trial, 3, h.active, h.ctx);
    h.ctx.optimizer_ = MakeOptimizer(h.trial.optimizer, *h.ctx.model_);
    step = WrapStep(BaseStep(*h.ctx.model_, h.ctx.optimizer_.get()), h.active, h.ctx);
    h.ctx.step_ = &step;
  }
  std::vector<torch::Tensor> Weights() {
    std::vector<torch::Tensor> out;
    for (auto& p : h.ctx.model_->parameters()) out.push_back(p.detach().clone());
    return out;
  }
  TrialHarness h;
  std::unique_ptr<data::DataSource> data;
  Step step;
};

TEST(TrialProbe, OnlyInOnTrainBegin) {
  Probing p;
  EXPECT_THROW(p.h.ctx.probe_batch(8, 2), std::logic_error);
}

TEST(TrialProbe, TimesTheStepAndRestoresTheWeights) {
  Probing p;
  const auto before = p.Weights();
  p.h.ctx.in_train_begin_ = true;
  const auto r = p.h.ctx.probe_batch(16, 3);
  p.h.ctx.EndTrainBegin();
  EXPECT_TRUE(r.fits) << r.error;
  EXPECT_EQ(r.batch_size, 16);
  EXPECT_GT(r.step_ms, 0);
  const auto after = p.Weights();
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], after[i])) << i;
  for (auto& w : p.h.ctx.model_->parameters()) EXPECT_FALSE(w.grad().defined());
}

TEST(TrialProbe, OutOfHostMemoryIsAResultNotAnError) {
  Probing p;
  host_memory::Install();
  const int64_t old = host_memory::Limit();
  host_memory::SetLimit(64 << 20);
  p.h.ctx.in_train_begin_ = true;
  const auto r = p.h.ctx.probe_batch(1 << 20, 1);  // 1M samples of 3x8x8 floats: 768 MiB
  host_memory::SetLimit(old);
  EXPECT_FALSE(r.fits);
  EXPECT_NE(r.error.find("out of memory"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
}

TEST(TrialProbe, TokenDataIsProbedWithTokenIds) {
  const auto dir = std::filesystem::temp_directory_path() / "runx_probe_text";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "t.txt") << std::string(2000, 'z');
  setenv("RUNX_CACHE_DIR", (dir / "cache").c_str(), 1);
  nlohmann::json config = testing::TinyConfig(
      {{"model", {{"name", "gpt"}, {"n_layer", 1}, {"n_head", 2}, {"d_model", 16}}},
       {"data", {{"source", "text"}, {"path", (dir / "t.txt").string()}, {"seq_len", 32}, {"batch_size", 4}}}});
  config["data"].erase("shape");
  config["data"].erase("num_classes");
  Probing p(config);
  p.h.ctx.in_train_begin_ = true;
  const auto r = p.h.ctx.probe_batch(8, 1);  // gpt throws on float inputs: these must be token ids
  p.h.ctx.EndTrainBegin();
  unsetenv("RUNX_CACHE_DIR");
  runx::testing::RemoveTree(dir.string());
  EXPECT_TRUE(r.fits) << r.error;
  EXPECT_EQ(r.batch_size, 8);
}

}  // namespace
}  // namespace runx::engine
