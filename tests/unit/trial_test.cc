// A whole trial in-process on the CPU: tiny model, few steps, real plugins.
#include "trial/trial.h"
#include "machine/cpu_load.h"
#include "spec/label.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include <algorithm>

#include "plugins/loader.h"
#include "trial_support.h"

namespace runx::engine {
namespace {

nlohmann::json Tiny(nlohmann::json extra = nlohmann::json::object()) {
  return runx::testing::TinyConfig(std::move(extra));
}

const plugins::Registry& Plugins() { return runx::testing::TestPlugins(); }

double Metric(const store::TrialRecord& r, const std::string& name) {
  for (const auto& m : r.metrics)
    if (m.name == name && !m.step) return m.value;
  return -1;
}

TEST(Trial, RecordsStepsMetricsAndEnvironment) {
  auto r = RunTrial(Tiny({{"optimizations", {{"test_good", nlohmann::json::object()}}}}), Plugins());
  ASSERT_EQ(Name(r.status), "ok") << r.error;
  ASSERT_EQ(r.steps.size(), 8u);
  EXPECT_EQ(r.steps[0].phase, "warmup");
  EXPECT_EQ(r.steps[2].phase, "measure");
  EXPECT_EQ(r.steps[2].step, 0);
  EXPECT_GT(Metric(r, "samples_per_s"), 0);
  EXPECT_LE(Metric(r, "step_ms_p10"), Metric(r, "step_ms_median"));
  EXPECT_LE(Metric(r, "step_ms_median"), Metric(r, "step_ms_p90"));
  EXPECT_GT(Metric(r, "peak_mem_bytes"), 0);
  EXPECT_EQ(Metric(r, "test_good_setup"), 1);  // the plugin's hooks really ran
  EXPECT_EQ(Metric(r, "test_good_batches"), 8);
  EXPECT_EQ(Metric(r, "test_good_steps"), 8);
  EXPECT_EQ(r.device, "cpu");
  EXPECT_EQ(r.environment.at("plugin.test_good"), "0.1.2");
  EXPECT_FALSE(r.environment.at("libtorch_version").empty());
  EXPECT_EQ(r.label, "");  // the run labels its trials (sweep/record.h RecordInRun)
}

// test_sleep makes the 6 measured steps last 0.3 s: long enough for /proc/stat's 10 ms units to tell.
TEST(Trial, RecordsWhatOtherProcessesDidWhileItMeasured) {
  if (!SampleCpu()) GTEST_SKIP() << "no /proc/stat here";
  auto r = RunTrial(Tiny({{"optimizations", {{"test_sleep", {{"ms", 50}}}}}}), Plugins());
  ASSERT_EQ(Name(r.status), "ok") << r.error;
  EXPECT_GE(Metric(r, "noise.other_cpus"), 0);
  EXPECT_EQ(Metric(r, "noise.cpus"), OnlineCpus());
  EXPECT_GT(Metric(r, "noise.trial_cpus"), 0);
  int with_unit = 0;
  for (const auto& m : r.metrics)
    if (m.name.rfind("noise.", 0) == 0 && !m.step && m.unit == "cpus") ++with_unit;
  EXPECT_EQ(with_unit, 3);
  // And the load average as the measured steps ended, in the trial's own environment.
  EXPECT_EQ(std::count(r.environment.at("noise.load_average_after").begin(),
                       r.environment.at("noise.load_average_after").end(), ' '),
            2);
}

TEST(Trial, Bf16IsCarriedOutByAmp) {
  auto r = RunTrial(Tiny({{"precision", "bf16"}, {"optimizations", {{"channels_last", nlohmann::json::object()}}}}),
                    Plugins());
  ASSERT_EQ(Name(r.status), "ok") << r.error;
  EXPECT_EQ(r.label, "");  // the run labels its trials (sweep/record.h RecordInRun)
  EXPECT_EQ(r.environment.count("plugin.amp"), 1u);
  EXPECT_GT(Metric(r, "channels_last_tensors"), 0);
}

TEST(Trial, TechniqueThatThrowsBecomesAFailedTrial) {
  auto r = RunTrial(Tiny({{"optimizations", {{"test_throws", {{"message", "kaputt"}}}}}}), Plugins());
  EXPECT_EQ(Name(r.status), "failed");
  EXPECT_EQ(r.error, "technique 'test_throws' failed in on_setup: kaputt");
}

TEST(Trial, IncompatibleTechniqueIsRecordedWithItsReason) {
  auto r = RunTrial(Tiny({{"model", {{"name", "mlp"}}},
                          {"data", {{"shape", {12}}}},
                          {"optimizations", {{"channels_last", nlohmann::json::object()}}}}),
                    Plugins());
  EXPECT_EQ(Name(r.status), "incompatible");
  EXPECT_EQ(
      r.error,
      "channels_last: channels_last needs image samples [channels, height, width]; data.shape has 1 dimension(s)");
}

TEST(Trial, UnavailableDeviceNamesTheAvailableOnes) {
  auto r = RunTrial(Tiny({{"device", "cuda:7"}}), Plugins());
  EXPECT_EQ(Name(r.status), "failed");
  EXPECT_NE(r.error.find("device 'cuda:7' is not available"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("available here: cpu"), std::string::npos) << r.error;
}

TEST(Trial, DivergingLossIsRecordedAsNan) {
  auto r = RunTrial(Tiny({{"train", {{"optimizer", {{"name", "sgd"}, {"lr", 1e30}}}}}}), Plugins());
  EXPECT_EQ(Name(r.status), "nan");
  EXPECT_NE(r.error.find("loss became non-finite"), std::string::npos) << r.error;
}

TEST(Trial, LabelNamesPrecisionAndTechniques) {
  EXPECT_EQ(spec::LabelTrial(Tiny()).label, "baseline");
  EXPECT_EQ(
      spec::LabelTrial(Tiny({{"precision", "fp16"}, {"optimizations", {{"amp", nlohmann::json::object()}}}})).label,
      "fp16");
  EXPECT_EQ(spec::LabelTrial(Tiny({{"optimizations", {{"amp", nlohmann::json::object()}}}})).label, "amp");
}

}  // namespace
}  // namespace runx::engine
