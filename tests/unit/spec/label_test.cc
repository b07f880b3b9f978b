// LabelTrial: the one label of a trial, for a sweep's variants and for a config on its own.
#include <gtest/gtest.h>

#include "spec/label.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;

std::string Alone(const char* config) { return LabelTrial(json::parse(config)).label; }

TEST(Label, AConfigOnItsOwnIsNamedByWhatItRuns) {
  // What the engine's TrialLabel(config) gave, case by case.
  EXPECT_EQ(Alone(R"({"precision": "fp32", "optimizations": {}})"), "baseline");
  EXPECT_EQ(Alone(R"({})"), "baseline");
  EXPECT_EQ(Alone(R"({"precision": "bf16", "optimizations": {}})"), "bf16");
  EXPECT_EQ(Alone(R"({"precision": "bf16", "optimizations": {"amp": {}, "channels_last": {}}})"),
            "bf16+channels_last");  // amp is how bf16 runs
  EXPECT_EQ(Alone(R"({"precision": "fp32", "optimizations": {"amp": {"dtype": "fp16"}}})"), "amp");
  EXPECT_EQ(Alone(R"({"optimizations": {"cuda_graphs": {}, "amp": {}, "channels_last": {}}})"),
            "amp+channels_last+cuda_graphs");  // the config's order (a JSON mapping: by name)
  EXPECT_EQ(Alone(R"({"precision": "tf32", "optimizations": ["channels_last", "amp"]})"), "tf32+channels_last");
  EXPECT_EQ(Alone(R"({"precision": "fp32", "optimizations": ["channels_last", "amp"]})"), "channels_last+amp");
  EXPECT_EQ(LabelTrial(json::parse(R"({"precision": "bf16", "optimizations": {"channels_last": {}}})")).differs,
            "precision=bf16, +channels_last");
}

TEST(Label, AVariantIsNamedByWhatDiffersFromTheBaseline) {
  LabelAxes axes;
  axes.baseline = json::parse(R"({"precision": "fp32", "optimizations": {"amp": {}},
                                  "data": {"batch_size": 4}, "model": {"name": "mlp"}})");
  axes.axes = {"data.batch_size", "optimizations", "precision", "model.name"};
  axes.techniques = {"channels_last", "amp"};
  const json variant = json::parse(R"({"precision": "bf16", "optimizations": {"channels_last": {}},
                                       "data": {"batch_size": 8}, "model": {"name": "cnn"}})");
  const TrialName name = LabelTrial(variant, &axes);
  // Precision first, then techniques in the axis' order, then the other axes in axis order.
  EXPECT_EQ(name.label, "bf16+channels_last+no_amp+batch_size=8+model=cnn");
  EXPECT_EQ(name.differs, "precision=bf16, +channels_last, -amp, data.batch_size=8, model.name=cnn");
  EXPECT_EQ(LabelTrial(axes.baseline, &axes).label, "baseline");
  EXPECT_EQ(LabelTrial(axes.baseline, &axes).differs, "");
  // In a sweep, amp switched on under bf16 is a change of its own.
  axes.baseline["optimizations"] = json::object();
  EXPECT_EQ(LabelTrial(json::parse(R"({"precision": "bf16", "optimizations": {"amp": {}},
                                       "data": {"batch_size": 4}, "model": {"name": "mlp"}})"),
                       &axes)
                .label,
            "bf16+amp");
}

TEST(Label, AxesThatShareALeafUseTheirWholeKey) {
  // Both of them (sweep.cc renamed only the first of the two: "train.steps=6+steps=7").
  LabelAxes axes;
  axes.baseline = json::parse(R"({"train": {"steps": 5}, "infer": {"steps": 5}, "train2": {"lr": [1, 2]}})");
  axes.axes = {"train.steps", "infer.steps", "train2.lr"};
  const TrialName name =
      LabelTrial(json::parse(R"({"train": {"steps": 6}, "infer": {"steps": 7}, "train2": {"lr": [3]}})"), &axes);
  EXPECT_EQ(name.label, "train.steps=6+infer.steps=7+lr=[3]");
}

TEST(Label, ExpandUsesIt) {
  const Plan plan = PlanOf("precision: bf16\noptimizations: [channels_last]\n");
  EXPECT_EQ(plan.trials[0].label, LabelTrial(plan.trials[0].config).label);
}

}  // namespace
}  // namespace runx::spec::test
