// Counts the engine keeps a record per unit of (steps, passes, epochs, repeats) have a maximum in
// the schema: a huge value is a located error at validate time, not a bare 'vector::reserve'
// when the trial runs.
#include <gtest/gtest.h>

#include "test_util.h"

namespace runx::spec::test {
namespace {

const std::string kHead =
    "name: x\n"
    "model: {name: mlp}\n"
    "data: {source: synthetic, shape: [8], num_classes: 2, batch_size: 4}\n";

TEST(Limits, TrainSteps) {
  EXPECT_EQ(RenderText(kHead + "train: {steps: 1000000000000}\n"),
            "x.yaml:4:16: error: 'train.steps' must be <= 10000000, got 1000000000000\n"
            "    4 | train: {steps: 1000000000000}\n"
            "      |                ^\n"
            "note: a trial keeps each step's timings in memory; measure fewer steps, or split the run into several "
            "trials\n");
  EXPECT_EQ(RenderText(kHead + "train: {steps: 10000000}\n"), "");
}

TEST(Limits, WarmupAndEpochs) {
  EXPECT_EQ(RenderText(kHead + "train:\n  warmup_steps: 1000001\n  epochs: 1e6\n"),
            "x.yaml:5:17: error: 'train.warmup_steps' must be <= 1000000, got 1000001\n"
            "    5 |   warmup_steps: 1000001\n"
            "      |                 ^\n"
            "note: a trial keeps each step's timings in memory; a warm-up needs tens of steps\n"
            "x.yaml:6:11: error: 'train.epochs' must be <= 1000, got 1000000.0\n"
            "    6 |   epochs: 1e6\n"
            "      |           ^\n"
            "note: a trial keeps each step's timings in memory; measure fewer epochs, or split the run into several "
            "trials\n");
}

TEST(Limits, Inference) {
  EXPECT_EQ(RenderText(kHead + "task: infer\ninfer: {warmup_steps: 5000000, steps: 99999999999}\n"),
            "x.yaml:5:23: error: 'infer.warmup_steps' must be <= 1000000, got 5000000\n"
            "    5 | infer: {warmup_steps: 5000000, steps: 99999999999}\n"
            "      |                       ^\n"
            "note: a trial keeps each pass's latency in memory; a warm-up needs tens of passes\n"
            "x.yaml:5:39: error: 'infer.steps' must be <= 10000000, got 99999999999\n"
            "    5 | infer: {warmup_steps: 5000000, steps: 99999999999}\n"
            "      |                                       ^\n"
            "note: a trial keeps each pass's latency in memory; measure fewer passes, or split the run into several "
            "trials\n");
}

TEST(Limits, RepeatsAndOverrides) {
  EXPECT_EQ(RenderText(kHead + "repeats: 1001\n"),
            "x.yaml:4:10: error: 'repeats' must be <= 1000, got 1001\n"
            "    4 | repeats: 1001\n"
            "      |          ^\n"
            "note: a sweep holds at most 100000 trials (variants x repeats); use fewer repeats\n");
  EXPECT_EQ(RenderText(kHead, {"train.steps=1000000000000"}),
            "--set train.steps=1000000000000: error: 'train.steps' must be <= 10000000, got 1000000000000\n"
            "note: a trial keeps each step's timings in memory; measure fewer steps, or split the run into several "
            "trials\n");
  // A sweep axis value is checked the same way.
  EXPECT_EQ(RenderText(kHead + "sweep: {axes: {train.steps: [10, 20000000]}}\n"),
            "x.yaml:4:34: error: 'train.steps' must be <= 10000000, got 20000000\n"
            "    4 | sweep: {axes: {train.steps: [10, 20000000]}}\n"
            "      |                                  ^\n"
            "note: a trial keeps each step's timings in memory; measure fewer steps, or split the run into several "
            "trials\n");
}

}  // namespace
}  // namespace runx::spec::test
