// The sweep block: expansion (grid / ablation / all_subsets), labels, order, shards, hashes,
// the text of `runx plan`, and the messages for a wrong sweep.
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "spec/sweep.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;

// Lines 1-4; a test's own lines start at line 5.
const std::string kBase =
    "name: s\n"
    "device: cpu\n"
    "model: {name: mlp}\n"
    "data: {source: synthetic, shape: [8], num_classes: 2, batch_size: 4}\n";

Plan PlanOf(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  return Expand(LoadText("x.yaml", kBase + yaml, Sets(sets), Schemas()), Schemas());
}

/// The labels of the variants, in variant order.
std::vector<std::string> Labels(const Plan& plan) {
  std::vector<std::string> out(static_cast<size_t>(plan.variants));
  for (const auto& t : plan.trials) out[static_cast<size_t>(t.variant_index)] = t.label;
  return out;
}

/// The variant index of each trial, in execution order.
std::vector<int> Sequence(const Plan& plan) {
  std::vector<int> out;
  for (const auto& t : plan.trials) out.push_back(t.variant_index);
  return out;
}

const PlannedTrial& Variant(const Plan& plan, const std::string& label) {
  for (const auto& t : plan.trials)
    if (t.label == label) return t;
  throw std::runtime_error("no variant " + label);
}

using Strings = std::vector<std::string>;

TEST(Sweep, NoSweepIsOneBaselineTrialNamedByWhatItRuns) {
  const Experiment e = LoadText("x.yaml", kBase + "precision: bf16\noptimizations: [channels_last]\n", {}, Schemas());
  const Plan plan = Expand(e, Schemas());
  ASSERT_EQ(plan.trials.size(), 1u);
  EXPECT_EQ(plan.mode, "single");
  EXPECT_EQ(plan.variants, 1);
  const PlannedTrial& t = plan.trials[0];
  EXPECT_TRUE(t.is_baseline);
  EXPECT_EQ(t.label, "bf16+channels_last");  // as the trial is labelled; "baseline" only with no changes
  EXPECT_EQ(t.differs, "");
  EXPECT_EQ(t.config["precision"], json("bf16"));
  EXPECT_EQ(t.config["optimizations"]["channels_last"], json::parse(R"({"inputs": true})"));
  for (const char* key : {"sweep", "repeats", "order", "order_seed", "trial_timeout_s"})
    EXPECT_FALSE(t.config.contains(key)) << key;
  EXPECT_EQ(t.config_hash, Sha256Hex(t.config.dump()));
  EXPECT_EQ(e.config["repeats"], json(1));  // the experiment keeps them, with defaults
  EXPECT_EQ(e.config["order"], json("interleaved"));
  EXPECT_EQ(e.config["trial_timeout_s"], json(3600));
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
  EXPECT_EQ(Labels(plan), (Strings{"baseline", "lr=0.01", "model=cnn", "device=auto", "lr=0.01+model=cnn+device=auto"}));
  EXPECT_EQ(Variant(plan, "lr=0.01").differs, "train.optimizer.lr=0.01");
  EXPECT_EQ(Variant(plan, "model=cnn").config["model"]["channels"], json::parse("[32, 64]"));  // defaults filled
}

TEST(Sweep, NestedAxesAndOverrides) {
  const std::string yaml = "sweep:\n  axes:\n    data:\n      batch_size: [4, 8]\n";
  EXPECT_EQ(Labels(PlanOf(yaml)), (Strings{"baseline", "batch_size=8"}));
  EXPECT_EQ(Labels(PlanOf(yaml, {"sweep.axes.data.batch_size=[4, 16]"})), (Strings{"baseline", "batch_size=16"}));
  EXPECT_EQ(Labels(PlanOf("sweep: {axes: {data.batch_size: [4, 8]}}\n", {"sweep.axes.data.batch_size=[2, 4]"})),
            (Strings{"baseline", "batch_size=4"}));
  EXPECT_EQ(PlanOf(yaml, {"sweep.mode=ablation"}).mode, "ablation");
}

const std::string kThree = "sweep: {axes: {data.batch_size: [4, 8, 16]}}\n";

TEST(Sweep, InterleavedOrder) {
  const Plan plan = PlanOf("repeats: 3\n" + kThree);
  EXPECT_EQ(plan.repeats, 3);
  EXPECT_EQ(plan.order, "interleaved");
  EXPECT_EQ(Sequence(plan), (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
  for (size_t i = 0; i < plan.trials.size(); ++i) {
    EXPECT_EQ(plan.trials[i].order_index, static_cast<int>(i));
    EXPECT_EQ(plan.trials[i].repeat_index, static_cast<int>(i / 3));
  }
}

TEST(Sweep, SequentialOrder) {
  const Plan plan = PlanOf("repeats: 3\norder: sequential\n" + kThree);
  EXPECT_EQ(Sequence(plan), (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(plan.trials[4].repeat_index, 1);
  EXPECT_EQ(plan.trials[4].order_index, 4);
}

TEST(Sweep, ShuffledOrderIsSeeded) {
  const std::string sweep = "sweep: {axes: {data.batch_size: [1, 2, 3, 4, 5, 6]}}\nrepeats: 4\norder: shuffled\n";
  const Plan a = PlanOf(sweep + "order_seed: 7\n");
  EXPECT_EQ(a.order_seed, 7u);
  EXPECT_EQ(Sequence(a), Sequence(PlanOf(sweep + "order_seed: 7\n")));
  EXPECT_NE(Sequence(a), Sequence(PlanOf(sweep + "order_seed: 8\n")));
  // Each round is a permutation of the variants; the rounds differ.
  std::set<std::vector<int>> rounds;
  const std::vector<int> sequence = Sequence(a);
  for (int r = 0; r < 4; ++r) {
    std::vector<int> round(sequence.begin() + r * 6, sequence.begin() + (r + 1) * 6);
    EXPECT_EQ(a.trials[static_cast<size_t>(r) * 6].repeat_index, r);
    rounds.insert(round);
    std::sort(round.begin(), round.end());
    EXPECT_EQ(round, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  }
  EXPECT_GT(rounds.size(), 1u);
  // Without order_seed, the experiment's seed.
  EXPECT_EQ(PlanOf(sweep + "seed: 11\n").order_seed, 11u);
  EXPECT_EQ(Sequence(PlanOf(sweep + "seed: 11\n")), Sequence(PlanOf(sweep + "order_seed: 11\n")));
}

TEST(Sweep, ConfigHashIgnoresHowTrialsRun) {
  const std::string yaml = "sweep: {mode: ablation, axes: {precision: [fp32, bf16], optimizations: [channels_last]}}\n";
  const Plan a = PlanOf(yaml);
  const Plan b = PlanOf(yaml, {"repeats=5", "order=shuffled", "order_seed=3", "trial_timeout_s=10"});
  ASSERT_EQ(b.trials.size(), 20u);
  std::set<std::string> hashes;
  for (const auto& t : a.trials) {
    hashes.insert(t.config_hash);
    EXPECT_EQ(t.config_hash, Sha256Hex(t.config.dump()));
    for (const auto& u : b.trials)
      if (u.label == t.label) EXPECT_EQ(u.config_hash, t.config_hash) << t.label;
  }
  EXPECT_EQ(hashes.size(), 4u);  // one per variant
  EXPECT_EQ(b.trial_timeout_s, 10);
  // The same for a single trial; and the hash does not depend on the sweep around it.
  EXPECT_EQ(PlanOf("").trials[0].config_hash, PlanOf("repeats: 2\ntrial_timeout_s: 5\n").trials[0].config_hash);
  EXPECT_EQ(PlanOf("").trials[0].config, a.trials[0].config);
  EXPECT_EQ(PlanOf("").trials[0].config_hash, a.trials[0].config_hash);
}

TEST(Sweep, ShardsPartitionThePlan) {
  const Plan plan = PlanOf("repeats: 3\n" + kThree);
  const Plan s0 = Shard(plan, "0/2"), s1 = Shard(plan, "1/2");
  EXPECT_EQ(s0.trials.size() + s1.trials.size(), plan.trials.size());
  std::set<int> seen;
  for (const auto* s : {&s0, &s1})
    for (const auto& t : s->trials) {
      EXPECT_TRUE(seen.insert(t.order_index).second);
      EXPECT_EQ(t.order_index % 2, s == &s0 ? 0 : 1);
    }
  EXPECT_EQ(seen.size(), plan.trials.size());
  EXPECT_EQ(s1.shard_index, 1);
  EXPECT_EQ(s1.shard_count, 2);
  EXPECT_EQ(Shard(plan, "0/1").trials.size(), plan.trials.size());
}

TEST(Sweep, BadShards) {
  const Plan plan = PlanOf("");
  const auto message = [&](const std::string& spec) {
    try {
      Shard(plan, spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("2/2"), "invalid shard '2/2': the shard index must be less than the count 2 (shards are counted from 0)");
  EXPECT_EQ(message("0/0"), "invalid shard '0/0': the shard count must be at least 1");
  for (const char* bad : {"", "1", "a/b", "-1/2", "1/2/3", " 1/2", "1/", "/2", "99999999999/2"})
    EXPECT_EQ(message(bad), "invalid shard '" + std::string(bad) + "': expected 'i/n', shard i of n counted from 0, e.g. '0/4'");
}

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
  EXPECT_EQ(RenderText(kBase + "sweep:\n  axes:\n    precision: [bf16, fp16]\n    data.batch_size: [1, 2, 3, 4, 5, 6, 7, 8]\n"
                               "    data.num_classes: [2, 3, 4, 5, 6, 7, 8, 9]\n    seed: [1, 2, 3, 4, 5, 6, 7, 8]\n"
                               "    model.hidden: [[1], [2], [3], [4]]\n"),
            "x.yaml:6:3: error: the sweep makes 4097 variants; at most 4096\n"
            "    6 |   axes:\n"
            "      |   ^\n"
            "note: use fewer axes or values, or mode ablation (the baseline, each change alone, all changes together)\n");
  EXPECT_EQ(RenderText(kBase + "sweep:\n  axes:\n    precision: [fp32, fp16]\n    data.batch_size: [1, 2, 3, 4, 5, 6, 7, 8]\n"
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

TEST(RenderPlanTest, SmallAblation) {
  const Plan plan = PlanOf(
      "repeats: 3\n"
      "sweep:\n"
      "  mode: ablation\n"
      "  axes:\n"
      "    precision: [fp32, bf16]\n"
      "    optimizations: [channels_last]\n");
  EXPECT_EQ(RenderPlan(plan),
            "ablation sweep: 4 variants x 3 repeats = 12 trials\n"
            "\n"
            "  #  label               differs                         trials\n"
            "  0  baseline            (baseline)                           3\n"
            "  1  bf16                precision=bf16                       3\n"
            "  2  channels_last       +channels_last                       3\n"
            "  3  bf16+channels_last  precision=bf16, +channels_last       3\n"
            "\n"
            "order: interleaved: 0 1 2 3 | 0 1 2 3 | 0 1 2 3\n"
            "timeout: 3600 s per trial\n");
  EXPECT_EQ(RenderPlan(Shard(plan, "1/2")),
            "ablation sweep: 4 variants x 3 repeats = 12 trials\n"
            "shard 1/2: 6 of the 12 trials\n"
            "\n"
            "  #  label               differs                         trials\n"
            "  1  bf16                precision=bf16                       3\n"
            "  3  bf16+channels_last  precision=bf16, +channels_last       3\n"
            "\n"
            "order: interleaved: 1 3 | 1 3 | 1 3\n"
            "timeout: 3600 s per trial\n");
}

TEST(RenderPlanTest, SingleAndShuffled) {
  EXPECT_EQ(RenderPlan(PlanOf("trial_timeout_s: 90.5\n")),
            "no sweep: 1 variant x 1 repeat = 1 trial\n"
            "\n"
            "  #  label     differs     trials\n"
            "  0  baseline  (baseline)       1\n"
            "\n"
            "order: interleaved: 0\n"
            "timeout: 90.5 s per trial\n");
  const std::string text = RenderPlan(PlanOf("repeats: 2\norder: shuffled\norder_seed: 5\n" + kThree));
  EXPECT_NE(text.find("\norder: shuffled (seed 5): "), std::string::npos) << text;
}

}  // namespace
}  // namespace runx::spec::test
