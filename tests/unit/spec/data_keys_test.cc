// The data section: batch_size 'auto', memmap keys, placement and produce_ms, and the rules that
// tie a key to its source.
#include <gtest/gtest.h>

#include "spec/sweep.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;

const std::string kHead = "name: x\nmodel: {name: mlp}\n";

json DataOf(const std::string& data, const std::vector<std::string>& sets = {}) {
  return LoadText("x.yaml", kHead + "data: " + data + "\n", Sets(sets), Schemas()).config["data"];
}

TEST(DataKeys, BatchSizeAutoIsValidAndKept) {
  EXPECT_EQ(DataOf("{source: fashion-mnist, batch_size: auto}")["batch_size"], json("auto"));
  EXPECT_EQ(DataOf("{source: fashion-mnist, batch_size: 64}", {"data.batch_size=auto"})["batch_size"], json("auto"));
  const Plan plan = Expand(LoadText("x.yaml",
                                    kHead + "data: {source: fashion-mnist, batch_size: 64}\n"
                                            "sweep: {axes: {data.batch_size: [64, auto]}}\n",
                                    {}, Schemas()),
                           Schemas());
  ASSERT_EQ(plan.trials.size(), 2u);
  EXPECT_EQ(plan.trials[1].config["data"]["batch_size"], json("auto"));
}

TEST(DataKeys, BatchSizeOtherThanAPositiveIntegerOrAuto) {
  EXPECT_EQ(RenderText(kHead + "data: {source: fashion-mnist, batch_size: atuo}\n"),
            "x.yaml:3:43: error: unknown batch size 'atuo'\n"
            "    3 | data: {source: fashion-mnist, batch_size: atuo}\n"
            "      |                                           ^\n"
            "note: expected a positive integer or 'auto'; did you mean 'auto'?\n");
  EXPECT_EQ(RenderText(kHead + "data: {source: fashion-mnist, batch_size: 1.5}\n"),
            "x.yaml:3:43: error: 'data.batch_size' must be an integer or a string, got number 1.5\n"
            "    3 | data: {source: fashion-mnist, batch_size: 1.5}\n"
            "      |                                           ^\n"
            "note: write a positive integer, or 'auto' to let the auto_batch technique choose\n");
  EXPECT_EQ(RenderText(kHead + "data: {source: fashion-mnist, batch_size: 0}\n"),
            "x.yaml:3:43: error: 'data.batch_size' must be >= 1, got 0\n"
            "    3 | data: {source: fashion-mnist, batch_size: 0}\n"
            "      |                                           ^\n");
}

TEST(DataKeys, MemmapWithEveryKey) {
  const json d = DataOf(
      "{source: memmap, path: x.bin, dtype: uint8, shape: [1, 28, 28], labels: y.bin, label_dtype: uint8, "
      "eval_path: ex.npy, eval_labels: ey.npy, num_classes: 10, batch_size: auto, shuffle: false, scale: 0.5, "
      "normalize: {mean: [0.1, 0.2, 0.3], std: 0.5}, train_limit: 100}");
  EXPECT_EQ(d["source"], json("memmap"));
  EXPECT_EQ(d["path"], json("x.bin"));
  EXPECT_EQ(d["normalize"]["mean"], json::parse("[0.1, 0.2, 0.3]"));
  EXPECT_FALSE(d.contains("placement"));  // no default: absent stays absent (and hashes as before)
  EXPECT_EQ(DataOf("{source: memmap, path: a.npy, labels: b.npy, batch_size: 8}")["shuffle"], json(true));
}

TEST(DataKeys, MemmapNeedsPathAndLabels) {
  EXPECT_EQ(RenderText(kHead + "data: {source: memmap, batch_size: 8}\n"),
            "x.yaml:3:1: error: missing required key 'path' in 'data'\n"
            "    3 | data: {source: memmap, batch_size: 8}\n"
            "      | ^\n"
            "note: memmap data needs 'path' (the inputs file) and 'labels' (the labels file), e.g. path: "
            "train_inputs.npy, labels: train_labels.npy; 'runx data pack' writes them\n"
            "x.yaml:3:1: error: missing required key 'labels' in 'data'\n"
            "    3 | data: {source: memmap, batch_size: 8}\n"
            "      | ^\n"
            "note: memmap data needs 'path' (the inputs file) and 'labels' (the labels file), e.g. path: "
            "train_inputs.npy, labels: train_labels.npy; 'runx data pack' writes them\n");
  EXPECT_EQ(RenderText(kHead + "data: {source: memmap, path: a.npy, labels: b.npy, eval_path: c.npy, batch_size: 8}\n"),
            "x.yaml:3:52: error: 'data.eval_path' needs 'data.eval_labels'\n"
            "    3 | data: {source: memmap, path: a.npy, labels: b.npy, eval_path: c.npy, batch_size: 8}\n"
            "      |                                                    ^\n"
            "note: the held-out split is two files: its inputs (eval_path) and their labels (eval_labels)\n");
}

TEST(DataKeys, KeysOfAnotherSource) {
  EXPECT_EQ(RenderText(kHead + "data: {source: synthetic, shape: [4], num_classes: 2, batch_size: 8, labels: y.npy}\n"),
            "x.yaml:3:70: error: 'data.labels' is not used by synthetic data\n"
            "    3 | data: {source: synthetic, shape: [4], num_classes: 2, batch_size: 8, labels: y.npy}\n"
            "      |                                                                      ^\n"
            "note: 'data.labels' is for memmap data\n");
  EXPECT_EQ(RenderText(kHead + "data: {source: memmap, path: a.npy, labels: b.npy, batch_size: 8, placement: host}\n"),
            "x.yaml:3:67: error: 'data.placement' is not used by memmap data\n"
            "    3 | data: {source: memmap, path: a.npy, labels: b.npy, batch_size: 8, placement: host}\n"
            "      |                                                                   ^\n"
            "note: 'data.placement' is for synthetic or fashion-mnist data\n");
}

TEST(DataKeys, PlacementAndProduceMs) {
  const json d =
      DataOf("{source: synthetic, shape: [4], num_classes: 2, batch_size: 8, placement: host, produce_ms: 2.5}");
  EXPECT_EQ(d["placement"], json("host"));
  EXPECT_EQ(d["produce_ms"], json(2.5));
  EXPECT_EQ(DataOf("{source: fashion-mnist, batch_size: 8, placement: host}")["placement"], json("host"));
  EXPECT_EQ(RenderText(kHead + "data: {source: synthetic, shape: [4], num_classes: 2, batch_size: 8, produce_ms: 3}\n"),
            "x.yaml:3:70: error: 'data.produce_ms' needs 'data.placement: host'\n"
            "    3 | data: {source: synthetic, shape: [4], num_classes: 2, batch_size: 8, produce_ms: 3}\n"
            "      |                                                                      ^\n"
            "note: produce_ms simulates the host work of making a batch; device-resident synthetic data has none\n");
  EXPECT_EQ(RenderText(kHead + "data: {source: fashion-mnist, batch_size: 8, placement: gpu}\n"),
            "x.yaml:3:57: error: unknown data placement 'gpu'\n"
            "    3 | data: {source: fashion-mnist, batch_size: 8, placement: gpu}\n"
            "      |                                                         ^\n"
            "note: expected one of 'device', 'host'\n");
}

TEST(DataKeys, MemmapValueChecks) {
  EXPECT_EQ(RenderText(kHead + "data: {source: memmap, path: a, labels: b, batch_size: 8, dtype: uint16}\n"),
            "x.yaml:3:66: error: unknown dtype 'uint16'\n"
            "    3 | data: {source: memmap, path: a, labels: b, batch_size: 8, dtype: uint16}\n"
            "      |                                                                  ^\n"
            "note: expected one of 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', "
            "'float64'; did you mean 'int16'?\n");
  EXPECT_EQ(RenderText(kHead + "data: {source: memmap, path: a, labels: b, batch_size: 8, normalize: {std: 0}}\n"),
            "x.yaml:3:76: error: 'data.normalize.std' must be > 0, got 0\n"
            "    3 | data: {source: memmap, path: a, labels: b, batch_size: 8, normalize: {std: 0}}\n"
            "      |                                                                            ^\n");
}

}  // namespace
}  // namespace runx::spec::test
