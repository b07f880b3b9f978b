// The loader of a trial: device data directly, host data through a technique's loader or the runner's.
#include "trial/loader.h"

#include <gtest/gtest.h>

#include "trial_support.h"

namespace runx::engine {
namespace {

using testing::TinyConfig;
using testing::TrialHarness;

nlohmann::json HostConfig() { return TinyConfig({{"data", {{"placement", "host"}}}}); }

TEST(TrialLoader, DeviceDataComesStraightFromTheSource) {
  TrialHarness h;
  auto data = data::MakeDataSource(h.config.at("data"), torch::kCPU, 3);
  ASSERT_FALSE(data->on_host());
  auto l = MakeTrialLoader(*data, torch::kCPU, h.active, h.ctx);
  EXPECT_EQ(l.host, nullptr);
  EXPECT_EQ(l.loader->next().input.sizes().vec(), (std::vector<int64_t>{4, 3, 8, 8}));
}

TEST(TrialLoader, HostDataIsFetchedInOrder) {
  TrialHarness h(HostConfig());
  auto data = data::MakeDataSource(h.config.at("data"), torch::kCPU, 3);
  ASSERT_TRUE(data->on_host());
  auto l = MakeTrialLoader(*data, torch::kCPU, h.active, h.ctx);
  ASSERT_NE(l.host, nullptr);
  EXPECT_EQ(l.host->batch_size(), 4);
  for (int64_t i = 0; i < 3; ++i) {
    const Batch b = l.loader->next();
    const Batch want = data->Prepare(data->Get(i));
    EXPECT_TRUE(torch::equal(b.input, want.input)) << i;
    EXPECT_TRUE(torch::equal(b.target, want.target)) << i;
  }
}

struct OnesLoader : Loader {
  Batch next() override { return {torch::ones({1}), torch::zeros({1}, torch::kLong)}; }
};

struct SuppliesLoader : Technique {
  explicit SuppliesLoader(int& asked) : asked_(asked) {}
  std::unique_ptr<Loader> make_loader(const HostBatches&, TrialContext&) override {
    ++asked_;
    return std::make_unique<OnesLoader>();
  }
  int& asked_;
};

TEST(TrialLoader, TheFirstTechniqueWithALoaderWins) {
  TrialHarness h(HostConfig());
  int first = 0, second = 0;
  testing::AddTechnique(h, "first", std::make_unique<SuppliesLoader>(first));
  testing::AddTechnique(h, "second", std::make_unique<SuppliesLoader>(second));
  auto data = data::MakeDataSource(h.config.at("data"), torch::kCPU, 3);
  auto l = MakeTrialLoader(*data, torch::kCPU, h.active, h.ctx);
  EXPECT_EQ(l.loader->next().input.numel(), 1);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 0);
}

}  // namespace
}  // namespace runx::engine
