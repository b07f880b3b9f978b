// The variants of each sweep mode (grid / ablation / all_subsets), their configs and labels.
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "spec/sweep.h"
#include "spec/variants.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

const PlannedTrial& Variant(const Plan& plan, const std::string& label) {
  for (const auto& t : plan.trials)
    if (t.label == label) return t;
  throw std::runtime_error("no variant " + label);
}

TEST(Sweep, GridIsTheCartesianProduct) {
  const Plan plan = PlanOf(
      "sweep:\n"
      "  mode: grid\n"
      "  axes:\n"
      "    precision: [fp32, bf16]\n"
      "    data.batch_size: [4, 8]\n");
  EXPECT_EQ(plan.mode, "grid");
  EXPECT_EQ(plan.variants, 4);
  EXPECT_EQ(Labels(plan), (Strings{"baseline", "batch_size=8", "bf16", "bf16+batch_size=8"}));
  EXPECT_EQ(Variant(plan, "bf16+batch_size=8").differs, "precision=bf16, data.batch_size=8");
  EXPECT_EQ(Variant(plan, "bf16+batch_size=8").config["data"]["batch_size"], json(8));
  EXPECT_TRUE(plan.trials[0].is_baseline);
  for (size_t i = 1; i < plan.trials.size(); ++i) EXPECT_FALSE(plan.trials[i].is_baseline);
}

TEST(Sweep, GridSwitchesEachTechniqueOnAndOff) {
  const Plan plan = PlanOf("sweep: {axes: {optimizations: [channels_last, amp]}}\n");
  EXPECT_EQ(plan.mode, "grid");  // the default
  EXPECT_EQ(Labels(plan), (Strings{"baseline", "amp", "channels_last", "channels_last+amp"}));
  EXPECT_EQ(Variant(plan, "baseline").config["optimizations"], json::object());
  EXPECT_EQ(Variant(plan, "channels_last+amp").differs, "+channels_last, +amp");
  // Each technique gets its parameter defaults.
  EXPECT_EQ(Variant(plan, "amp").config["optimizations"]["amp"]["loss_scale"], json("auto"));
}

TEST(Sweep, GridAddsABaselineOutsideTheAxes) {
  // The default baseline precision is fp32 even when the axis does not list it.
  const Plan plan = PlanOf("sweep: {axes: {precision: [bf16, fp16]}}\n");
  EXPECT_EQ(Labels(plan), (Strings{"baseline", "bf16", "fp16"}));
  EXPECT_EQ(Variant(plan, "baseline").config["precision"], json("fp32"));
}

TEST(Sweep, Ablation) {
  const Plan plan = PlanOf(
      "sweep:\n"
      "  mode: ablation\n"
      "  axes:\n"
      "    precision: [fp32, bf16]\n"
      "    optimizations: [channels_last]\n");
  EXPECT_EQ(plan.mode, "ablation");
  EXPECT_EQ(Labels(plan), (Strings{"baseline", "bf16", "channels_last", "bf16+channels_last"}));
  EXPECT_EQ(Variant(plan, "bf16").differs, "precision=bf16");
  EXPECT_EQ(Variant(plan, "channels_last").differs, "+channels_last");
  EXPECT_EQ(Variant(plan, "bf16+channels_last").differs, "precision=bf16, +channels_last");
  // amp is implied by bf16 (the engine adds it), so it is neither in the config nor the label.
  EXPECT_EQ(Variant(plan, "bf16").config["optimizations"], json::object());
}

TEST(Sweep, AblationAllTogetherTakesTheLastValueAndDeduplicates) {
  const Plan plan = PlanOf(
      "sweep:\n"
      "  mode: ablation\n"
      "  axes:\n"
      "    data.batch_size: [4, 8, 16]\n"
      "    optimizations: [channels_last, amp]\n");
  EXPECT_EQ(Labels(plan), (Strings{"baseline", "batch_size=8", "batch_size=16", "channels_last", "amp",
                                   "channels_last+amp+batch_size=16"}));
  // One change only: "all together" is that change, listed once.
  EXPECT_EQ(Labels(PlanOf("sweep: {mode: ablation, axes: {precision: [fp32, bf16]}}\n")),
            (Strings{"baseline", "bf16"}));
}

TEST(Sweep, AllSubsets) {
  const Plan plan = PlanOf(
      "sweep:\n"
      "  mode: all_subsets\n"
      "  axes:\n"
      "    precision: [fp32, bf16, fp16]\n"
      "    optimizations: [channels_last, amp]\n"
      "    data.batch_size: [4, 8]\n");
  EXPECT_EQ(plan.variants, 3 * 2 * 2 * 2);  // precision picks at most one of bf16, fp16
  const auto labels = Labels(plan);
  EXPECT_EQ(std::set<std::string>(labels.begin(), labels.end()).size(), labels.size());
  // By the number of changes, then in axis order.
  EXPECT_EQ(Strings(labels.begin(), labels.begin() + 6),
            (Strings{"baseline", "bf16", "fp16", "channels_last", "amp", "batch_size=8"}));
  EXPECT_EQ(labels.back(), "fp16+channels_last+amp+batch_size=8");
  EXPECT_EQ(PlanOf("sweep: {mode: all_subsets, axes: {optimizations: [channels_last, amp]}}\n").variants, 4);
}

TEST(Sweep, ExplicitBaseline) {
  const Plan plan = PlanOf(
      "sweep:\n"
      "  mode: ablation\n"
      "  axes: {precision: [fp32, bf16], optimizations: [channels_last, amp]}\n"
      "  baseline: {precision: bf16, optimizations: [amp]}\n");
  EXPECT_EQ(Labels(plan), (Strings{"baseline", "fp32", "channels_last", "no_amp", "fp32+channels_last+no_amp"}));
  EXPECT_EQ(Variant(plan, "baseline").config["precision"], json("bf16"));
  EXPECT_TRUE(Variant(plan, "baseline").config["optimizations"].contains("amp"));
  EXPECT_EQ(Variant(plan, "no_amp").differs, "-amp");
}

TEST(Sweep, TechniqueParametersComeFromTheTopLevel) {
  const Plan plan = PlanOf(
      "optimizations: {amp: {dtype: fp16}, channels_last: {inputs: false}}\n"
      "sweep: {mode: ablation, axes: {optimizations: [amp]}}\n");
  // channels_last is not an axis: it is part of every variant; amp is switched.
  EXPECT_EQ(Labels(plan), (Strings{"baseline", "amp"}));
  EXPECT_EQ(Variant(plan, "baseline").config["optimizations"], json::parse(R"({"channels_last": {"inputs": false}})"));
  const json amp = Variant(plan, "amp").config["optimizations"]["amp"];
  EXPECT_EQ(amp["dtype"], json("fp16"));
  EXPECT_EQ(amp["growth_interval"], json(2000));
}

TEST(Sweep, OtherAxesAreLabelledByTheirLastKey) {
  const Plan plan = PlanOf(
      "train: {optimizer: {name: sgd}}\n"
      "sweep:\n"
      "  mode: ablation\n"
      "  axes:\n"
      "    train.optimizer.lr: [0.1, 0.01]\n"
      "    model.name: [mlp, cnn]\n"
      "    device: [cpu, auto]\n");
  EXPECT_EQ(Labels(plan),
            (Strings{"baseline", "lr=0.01", "model=cnn", "device=auto", "lr=0.01+model=cnn+device=auto"}));
  EXPECT_EQ(Variant(plan, "lr=0.01").differs, "train.optimizer.lr=0.01");
  EXPECT_EQ(Variant(plan, "model=cnn").config["model"]["channels"], json::parse("[32, 64]"));  // defaults filled
}

/// A sweep made by hand: precision [fp32, bf16] (baseline fp32), optimizations [a, b] (none on).
Sweep TwoAxes(SweepMode mode) {
  Sweep s;
  s.mode = mode;
  Axis precision;
  precision.key = "precision";
  precision.path = {"precision"};
  precision.values = {"fp32", "bf16"};
  precision.baseline = "fp32";
  precision.changes = {1};
  Axis techniques;
  techniques.key = "optimizations";
  techniques.techniques = true;
  techniques.values = {"a", "b"};
  techniques.base_on = {false, false};
  s.axes = {precision, techniques};
  return s;
}

std::vector<std::string> Show(const std::vector<Choice>& choices) {
  std::vector<std::string> out;
  for (const auto& c : choices) out.push_back(json(c).dump());
  return out;
}

TEST(Variants, OneFunctionPerMode) {
  EXPECT_EQ(Show(GridVariants(TwoAxes(SweepMode::kGrid))),
            (Strings{R"(["fp32",[]])", R"(["fp32",[]])", R"(["fp32",["b"]])", R"(["fp32",["a"]])",
                     R"(["fp32",["a","b"]])", R"(["bf16",[]])", R"(["bf16",["b"]])", R"(["bf16",["a"]])",
                     R"(["bf16",["a","b"]])"}));  // the baseline, then the grid (duplicates go later)
  EXPECT_EQ(
      Show(AblationVariants(TwoAxes(SweepMode::kAblation))),
      (Strings{R"(["fp32",[]])", R"(["bf16",[]])", R"(["fp32",["a"]])", R"(["fp32",["b"]])", R"(["bf16",["a","b"]])"}));
  EXPECT_EQ(Show(AllSubsetsVariants(TwoAxes(SweepMode::kAllSubsets))),
            (Strings{R"(["fp32",[]])", R"(["fp32",[]])", R"(["bf16",[]])", R"(["fp32",["a"]])", R"(["fp32",["b"]])",
                     R"(["bf16",["a"]])", R"(["bf16",["b"]])", R"(["fp32",["a","b"]])", R"(["bf16",["a","b"]])"}));
  EXPECT_EQ(Show(SweepVariants(TwoAxes(SweepMode::kAblation))), Show(AblationVariants(TwoAxes(SweepMode::kAblation))));
  EXPECT_EQ(CountVariants(TwoAxes(SweepMode::kGrid)), 8u);
  EXPECT_EQ(CountVariants(TwoAxes(SweepMode::kAblation)), 5u);
  EXPECT_EQ(CountVariants(TwoAxes(SweepMode::kAllSubsets)), 8u);
}

TEST(Variants, SingleIsTheConfigWithoutScheduleKeys) {
  const spec::Variant v = SingleVariant(json::parse(R"({"precision": "bf16", "repeats": 3, "order": "shuffled",
                                                  "optimizations": {"channels_last": {}}})"));
  EXPECT_EQ(v.config, json::parse(R"({"precision": "bf16", "optimizations": {"channels_last": {}}})"));
  EXPECT_EQ(v.name.label, "bf16+channels_last");
  EXPECT_EQ(v.name.differs, "");
}

}  // namespace
}  // namespace runx::spec::test

namespace runx::spec::test {
namespace {

TEST(Sweep, ATechniqueParameterIsAnAxis) {
  const Plan plan = PlanOf(
      "optimizations: {amp: {loss_scale: none}}\n"
      "sweep: {axes: {optimizations.amp.dtype: [fp16, bf16]}}\n");
  EXPECT_EQ(Labels(plan), (Strings{"baseline", "dtype=bf16"}));
  EXPECT_EQ(Variant(plan, "dtype=bf16").differs, "optimizations.amp.dtype=bf16");
  // The technique runs in every variant, with its other parameters as written.
  EXPECT_EQ(Variant(plan, "baseline").config["optimizations"]["amp"]["dtype"], json("fp16"));
  EXPECT_EQ(Variant(plan, "dtype=bf16").config["optimizations"]["amp"]["dtype"], json("bf16"));
  EXPECT_EQ(Variant(plan, "dtype=bf16").config["optimizations"]["amp"]["loss_scale"], json("none"));
}

}  // namespace
}  // namespace runx::spec::test
