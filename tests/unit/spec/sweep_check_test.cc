// The messages for a wrong sweep block, from Load and Validate.
#include <gtest/gtest.h>

#include "spec/sweep.h"
#include "spec/sweep_check.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

TEST(SweepMessages, UnknownAxis) {
  EXPECT_EQ(RenderText(kBase + "sweep:\n  axes:\n    data.batchsize: [4, 8]\n"),
            "x.yaml:7:5: error: unknown axis 'data.batchsize' in 'sweep.axes'\n"
            "    7 |     data.batchsize: [4, 8]\n"
            "      |     ^\n"
            "note: expected a config path such as 'precision', 'data.batch_size' or 'train.optimizer.lr', or "
            "'optimizations'; did you mean 'data.batch_size'?\n");
  EXPECT_EQ(RenderText(kBase + "sweep: {axes: {repeats: [1, 2]}}\n"),
            "x.yaml:5:16: error: 'repeats' cannot be a sweep axis\n"
            "    5 | sweep: {axes: {repeats: [1, 2]}}\n"
            "      |                ^\n"
            "note: it says how trials run, not what a trial is; set it at the top level\n");
}

TEST(SweepMessages, BadAxisValue) {
  EXPECT_EQ(RenderText(kBase + "sweep:\n  axes:\n    data.batch_size: [64, -1]\n"),
            "x.yaml:7:27: error: 'data.batch_size' must be >= 1, got -1\n"
            "    7 |     data.batch_size: [64, -1]\n"
            "      |                           ^\n");
  EXPECT_EQ(RenderText(kBase + "sweep:\n  axes:\n    precision:\n      - fp32\n      - fp8\n"),
            "x.yaml:9:9: error: unknown precision 'fp8'\n"
            "    9 |       - fp8\n"
            "      |         ^\n"
            "note: expected one of 'fp32', 'tf32', 'fp16', 'bf16'\n");
  EXPECT_EQ(RenderText(kBase + "sweep: {axes: {data.batch_size: [4, 4]}}\n"),
            "x.yaml:5:37: error: 'sweep.axes.data.batch_size' repeats 4\n"
            "    5 | sweep: {axes: {data.batch_size: [4, 4]}}\n"
            "      |                                     ^\n"
            "note: list each item once\n");
}

TEST(SweepMessages, UnknownTechniqueInAxis) {
  EXPECT_EQ(RenderText(kBase + "sweep:\n  axes:\n    optimizations: [amp, chanels_last]\n"),
            "x.yaml:7:26: error: unknown technique 'chanels_last'\n"
            "    7 |     optimizations: [amp, chanels_last]\n"
            "      |                          ^\n"
            "note: expected one of 'amp', 'channels_last'; did you mean 'channels_last'?\n");
}

TEST(SweepMessages, Baseline) {
  EXPECT_EQ(RenderText(kBase + "sweep:\n  axes: {precision: [fp32, bf16], optimizations: [amp]}\n"
                               "  baseline: {precison: bf16, optimizations: [channels_last]}\n"),
            "x.yaml:7:14: error: unknown axis 'precison' in 'sweep.baseline'\n"
            "    7 |   baseline: {precison: bf16, optimizations: [channels_last]}\n"
            "      |              ^\n"
            "note: the baseline gives a value to axes of 'sweep.axes'; expected one of 'precision', 'optimizations'; "
            "did you mean 'precision'?\n"
            "x.yaml:7:46: error: technique 'channels_last' is not in the 'optimizations' axis\n"
            "    7 |   baseline: {precison: bf16, optimizations: [channels_last]}\n"
            "      |                                              ^\n"
            "note: expected 'amp'; the baseline says which of the axis' techniques are on\n");
  EXPECT_EQ(RenderText(kBase + "sweep:\n  axes: {data.batch_size: [4, 8]}\n  baseline: {data.batch_size: 0}\n"),
            "x.yaml:7:31: error: 'data.batch_size' must be >= 1, got 0\n"
            "    7 |   baseline: {data.batch_size: 0}\n"
            "      |                               ^\n");
}

TEST(SweepMessages, AxisGivenTwice) {
  EXPECT_EQ(RenderText(kBase + "sweep:\n  axes:\n    data.shape: [[8], [2, 4]]\n    data: {shape: [[1]]}\n"),
            "x.yaml:8:12: error: axis 'data.shape' is given twice\n"
            "    8 |     data: {shape: [[1]]}\n"
            "      |            ^\n"
            "note: first given at line 7\n");
}

TEST(SweepMessages, ShapeOfTheBlock) {
  EXPECT_EQ(RenderText(kBase + "sweep:\n  mode: gird\n  axes: {}\n"),
            "x.yaml:6:9: error: unknown sweep mode 'gird'\n"
            "    6 |   mode: gird\n"
            "      |         ^\n"
            "note: expected one of 'grid', 'ablation', 'all_subsets'; did you mean 'grid'?\n"
            "x.yaml:7:9: error: 'sweep.axes' must have at least 1 key, got 0\n"
            "    7 |   axes: {}\n"
            "      |         ^\n");
  EXPECT_EQ(RenderText(kBase + "sweep: {axes: {precision: bf16}}\n"),
            "x.yaml:5:27: error: 'sweep.axes.precision' must be a list, got string 'bf16'\n"
            "    5 | sweep: {axes: {precision: bf16}}\n"
            "      |                           ^\n"
            "note: list the values of an axis, e.g. 'data.batch_size: [64, 128]'\n");
}

TEST(SweepMessages, RulesBrokenByACombination) {
  EXPECT_EQ(RenderText(kBase + "sweep:\n  axes: {train.steps: [5], train.epochs: [1]}\n"),
            "x.yaml:5:1: error: variant 'baseline': 'train.steps' cannot be used together with 'train.epochs'\n"
            "    5 | sweep:\n"
            "      | ^\n"
            "note: 'train.epochs' is set in the file; measure either a number of steps or a number of epochs\n");
}

TEST(SweepMessages, TooManyVariants) {
  // 2 x 8 x 8 x 8 x 4 = 4096 grid points, plus the baseline (fp32 is not in the grid).
  EXPECT_EQ(
      RenderText(kBase + "sweep:\n  axes:\n    precision: [bf16, fp16]\n    data.batch_size: [1, 2, 3, 4, 5, 6, 7, 8]\n"
                         "    data.num_classes: [2, 3, 4, 5, 6, 7, 8, 9]\n    seed: [1, 2, 3, 4, 5, 6, 7, 8]\n"
                         "    model.hidden: [[1], [2], [3], [4]]\n"),
      "x.yaml:6:3: error: the sweep makes 4097 variants; at most 4096\n"
      "    6 |   axes:\n"
      "      |   ^\n"
      "note: use fewer axes or values, or mode ablation (the baseline, each change alone, all changes together)\n");
  EXPECT_EQ(
      RenderText(kBase + "sweep:\n  axes:\n    precision: [fp32, fp16]\n    data.batch_size: [1, 2, 3, 4, 5, 6, 7, 8]\n"
                         "    data.num_classes: [2, 3, 4, 5, 6, 7, 8, 9]\n    seed: [1, 2, 3, 4, 5, 6, 7, 8]\n"
                         "    model.hidden: [[1], [2], [3], [4]]\n"),
      "");
}

TEST(SweepMessages, ValidateAndLoadReportThem) {
  const std::string bad = kBase + "sweep: {axes: {data.batch_size: [4, -1]}}\n";
  EXPECT_EQ(ValidateText("x.yaml", bad, {}, Schemas()).size(), 1u);
  EXPECT_THROW(LoadText("x.yaml", bad, {}, Schemas()), SpecError);
  EXPECT_EQ(RenderText(kBase + "sweep: {axes: {data.batch_size: [4, 8]}}\n", {"sweep.axes.data.batch_size=[0]"}),
            "--set sweep.axes.data.batch_size=[0]: error: 'data.batch_size' must be >= 1, got 0\n");
}

// 4096 variants: 2 x 8 x 8 x 8 x 4 grid points, fp32 in the grid.
const std::string kLargest =
    "sweep:\n  axes:\n    precision: [fp32, fp16]\n    data.batch_size: [1, 2, 3, 4, 5, 6, 7, 8]\n"
    "    data.num_classes: [2, 3, 4, 5, 6, 7, 8, 9]\n    seed: [1, 2, 3, 4, 5, 6, 7, 8]\n"
    "    model.hidden: [[1], [2], [3], [4]]\n";

TEST(SweepMessages, TooManyTrials) {
  // Within both limits of the schema (4096 variants, repeats <= 1000), beyond kMaxTrials.
  EXPECT_EQ(RenderText(kBase + "repeats: 25\n" + kLargest),
            "x.yaml:5:10: error: the sweep makes 4096 variants x 25 repeats = 102400 trials; at most 100000\n"
            "    5 | repeats: 25\n"
            "      |          ^\n"
            "note: use at most 24 repeats with 4096 variants, or fewer axes or values; split a longer campaign into "
            "several experiments\n");
  EXPECT_EQ(RenderText(kBase + kLargest, {"repeats=1000"}),
            "--set repeats=1000: error: the sweep makes 4096 variants x 1000 repeats = 4096000 trials; at most 100000\n"
            "note: use at most 24 repeats with 4096 variants, or fewer axes or values; split a longer campaign into "
            "several experiments\n");
  EXPECT_EQ(RenderText(kBase + "repeats: 24\n" + kLargest), "");
}

TEST(SweepMessages, CheckSize) {
  EXPECT_TRUE(CheckSize(kMaxVariants, static_cast<int>(kMaxTrials / kMaxVariants), true).empty());
  const auto at_axes = CheckSize(1000, 101, false);
  ASSERT_EQ(at_axes.size(), 1u);
  EXPECT_EQ(at_axes[0].pointer, "/sweep/axes");
  EXPECT_EQ(at_axes[0].message, "the sweep makes 1000 variants x 101 repeats = 101000 trials; at most 100000");
  EXPECT_EQ(CheckSize(kMaxVariants + 1, 1, true)[0].message, "the sweep makes 4097 variants; at most 4096");
}

}  // namespace
}  // namespace runx::spec::test

namespace runx::spec::test {
namespace {

TEST(SweepMessages, TechniqueParameterAxes) {
  EXPECT_EQ(RenderText(kBase + "optimizations: {amp: {}}\nsweep: {axes: {optimizations.amp.dtyp: [fp16, bf16]}}\n"),
            "x.yaml:6:16: error: unknown axis 'optimizations.amp.dtyp' in 'sweep.axes'\n"
            "    6 | sweep: {axes: {optimizations.amp.dtyp: [fp16, bf16]}}\n"
            "      |                ^\n"
            "note: 'amp' has no parameter 'dtyp'; did you mean 'dtype'?\n");
  EXPECT_EQ(RenderText(kBase + "sweep: {axes: {optimizations.amp.dtype: [fp16, bf16]}}\n"),
            "x.yaml:5:16: error: unknown axis 'optimizations.amp.dtype' in 'sweep.axes'\n"
            "    5 | sweep: {axes: {optimizations.amp.dtype: [fp16, bf16]}}\n"
            "      |                ^\n"
            "note: 'optimizations.amp.dtype' sweeps a parameter of a technique the experiment does not run: add "
            "'amp' to the top-level 'optimizations'\n");
  EXPECT_EQ(RenderText(kBase + "optimizations: {amp: {}}\nsweep: {axes: {optimizations.amp.dtype: [fp16, fp8]}}\n"),
            "x.yaml:6:48: error: unknown dtype 'fp8'\n"
            "    6 | sweep: {axes: {optimizations.amp.dtype: [fp16, fp8]}}\n"
            "      |                                                ^\n"
            "note: expected one of 'fp16', 'bf16'\n");
  EXPECT_EQ(RenderText(kBase + "optimizations: {amp: {}}\n"
                               "sweep: {axes: {optimizations: [amp], optimizations.amp.dtype: [fp16, bf16]}}\n"),
            "x.yaml:6:38: error: axis 'optimizations.amp.dtype' sweeps a parameter of 'amp', which the "
            "'optimizations' axis switches on and off\n"
            "    6 | sweep: {axes: {optimizations: [amp], optimizations.amp.dtype: [fp16, bf16]}}\n"
            "      |                                      ^\n"
            "note: sweep a technique's parameters or switch it, not both\n");
}

}  // namespace
}  // namespace runx::spec::test
