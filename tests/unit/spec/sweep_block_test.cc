// The sweep block read into axes: their order, their baselines, wrong axis paths.
#include <gtest/gtest.h>

#include "spec/sweep_block.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;

TEST(SweepBlock, AxisOrderIsTheOrderWritten) {
  SourceMap origins;
  origins.Set("/sweep/axes/b", {{7, 5}, {7, 3}, -1});
  origins.Set("/sweep/axes/a", {{8, 5}, {8, 3}, -1});
  origins.Set("/sweep/axes/c", {{}, {}, 0});  // from an override: after the file's
  EXPECT_EQ(AxisOrder(json::parse(R"({"a": [1], "b": [1], "c": [1]})"), origins),
            (std::vector<std::string>{"b", "a", "c"}));
}

TEST(SweepBlock, TrialBaseDropsTheScheduleKeys) {
  EXPECT_EQ(TrialBase(json::parse(R"({"seed": 1, "sweep": {}, "repeats": 2, "order": "shuffled",
                                      "order_seed": 3, "trial_timeout_s": 4})")),
            json::parse(R"({"seed": 1})"));
}

TEST(SweepBlock, ReadSweep) {
  const json config = json::parse(R"({"precision": "fp32", "sweep": {"mode": "ablation", "axes": {
      "data.batch_size": [4, 8], "precision": ["bf16"], "optimizations": ["amp", "channels_last"]},
      "baseline": {"optimizations": ["amp"]}}})");
  std::vector<Issue> issues;
  const Sweep s = ReadSweep(config, Schemas(), {"precision", "optimizations", "data.batch_size"}, &issues);
  EXPECT_TRUE(issues.empty());
  EXPECT_EQ(s.mode, SweepMode::kAblation);
  ASSERT_EQ(s.axes.size(), 3u);
  EXPECT_EQ(s.axes[0].baseline, json("fp32"));  // precision: fp32 unless the baseline says
  EXPECT_EQ(s.axes[0].changes, (std::vector<size_t>{0}));
  EXPECT_EQ(s.axes[1].base_on, (std::vector<bool>{true, false}));
  EXPECT_EQ(s.axes[2].path, (std::vector<std::string>{"data", "batch_size"}));
  EXPECT_EQ(s.axes[2].baseline, json(4));  // the first value

  const json wrong = json::parse(R"({"sweep": {"axes": {"data.batchsize": [4]}}})");
  ReadSweep(wrong, Schemas(), {"data.batchsize"}, &issues);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].pointer, "/sweep/axes/data.batchsize");
  EXPECT_EQ(issues[0].message, "unknown axis 'data.batchsize' in 'sweep.axes'");
}

}  // namespace
}  // namespace runx::spec::test
