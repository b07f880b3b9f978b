// The series `runx report` draws, read back from the example store (test_support.h): losses per
// training step, summary metrics by name, per-step metrics by prefix.
#include "store/run_series.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace runx::store {
namespace {

using testing::FillExampleStore;
using testing::MakeTrial;
using testing::TempDirTest;

class RunSeries : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = PathOf("runx.db");
    FillExampleStore(db_);
  }
  std::string db_;
};

// Run 1: trials 1, 2 (baseline), 3 (bf16) with 2 warmup steps without a loss and 5 measured
// steps with losses 2, 1.75, ... 1; trial 4 (fp16) is incompatible and has no step.
TEST_F(RunSeries, LossCurvesCountWarmupStepsInThePosition) {
  Store store = Store::Open(db_);
  const auto curves = ReadLossCurves(store, 1);
  ASSERT_EQ(curves.size(), 3u);
  EXPECT_EQ(curves.count(4), 0u);
  const std::vector<LossPoint>& bf16 = curves.at(3);
  ASSERT_EQ(bf16.size(), 5u);
  for (size_t i = 0; i < bf16.size(); ++i) {
    EXPECT_EQ(bf16[i].position, static_cast<int64_t>(2 + i));
    EXPECT_DOUBLE_EQ(bf16[i].loss, 2.0 - 0.25 * static_cast<double>(i));
  }
  EXPECT_EQ(ReadLossCurves(store, 3).size(), 2u);
}

TEST_F(RunSeries, SummaryMetricsByName) {
  Store store = Store::Open(db_);
  const auto m = ReadSummaryMetrics(store, 2, {"peak_mem_bytes", "accuracy", "no_such_metric"});
  ASSERT_EQ(m.size(), 2u);  // trials 5 and 6
  EXPECT_EQ(m.at(5).size(), 2u);
  EXPECT_DOUBLE_EQ(m.at(5).at("peak_mem_bytes"), 123456789.0);
  EXPECT_DOUBLE_EQ(m.at(6).at("peak_mem_bytes"), 123456790.0);
  EXPECT_DOUBLE_EQ(m.at(6).at("accuracy"), 0.91);
  // Per-step rows of the same name are not summary figures.
  EXPECT_TRUE(ReadSummaryMetrics(store, 2, {"loss_scale"}).empty());
}

TEST_F(RunSeries, StepMetricsByLiteralPrefix) {
  Store store = Store::Open(db_);
  {
    TrialRecord t = MakeTrial(3, 2, {"auto", false, 0, "ok", "", 100, 10});
    t.metrics.push_back({"auto_batch.batch", 8, "", 1});
    t.metrics.push_back({"auto_batch.batch", 4, "", 0});
    t.metrics.push_back({"auto_batch.fits", 1, "", 0});
    t.metrics.push_back({"autoXbatch.batch", 2, "", 0});  // '_' must not match any character
    t.metrics.push_back({"auto_batch.chosen", 8, "", std::nullopt});
    store.RecordTrial(t);
  }
  const auto rows = ReadStepMetrics(store, 3, "auto_batch.");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "auto_batch.batch");
  EXPECT_EQ(rows[0].step, 0);
  EXPECT_DOUBLE_EQ(rows[0].value, 4);
  EXPECT_EQ(rows[1].name, "auto_batch.fits");
  EXPECT_EQ(rows[2].step, 1);
  EXPECT_DOUBLE_EQ(rows[2].value, 8);
  EXPECT_EQ(ReadStepMetrics(store, 1, "loss_scale").size(), 6u);  // 2 per ok trial
  EXPECT_TRUE(ReadStepMetrics(store, 2, "auto_batch.").empty());
}

TEST_F(RunSeries, AMissingRunIsAnError) {
  Store store = Store::Open(db_);
  EXPECT_THROW(ReadLossCurves(store, 9), StoreError);
  EXPECT_THROW(ReadSummaryMetrics(store, 9, {"accuracy"}), StoreError);
  EXPECT_THROW(ReadStepMetrics(store, 9, ""), StoreError);
}

}  // namespace
}  // namespace runx::store
