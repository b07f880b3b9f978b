// --set key=value: typed by YAML, applied before validation, errors point at the override.
#include <gtest/gtest.h>

#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;

json Config(const std::vector<std::string>& sets) { return Load(kData + "/good.yaml", Sets(sets), Schemas()).config; }

TEST(Overrides, ValuesAreTypedLikeYaml) {
  const json c = Config({"data.batch_size=128", "device=cuda:1", "model.hidden=[512, 256]", "data.shuffle=false",
                         "train.optimizer.lr=1e-3", "name='007'"});
  EXPECT_EQ(c["data"]["batch_size"], json(128));
  EXPECT_EQ(c["device"], json("cuda:1"));
  EXPECT_EQ(c["model"]["hidden"], json::parse("[512, 256]"));
  EXPECT_EQ(c["data"]["shuffle"], json(false));
  EXPECT_DOUBLE_EQ(c["train"]["optimizer"]["lr"].get<double>(), 0.001);
  EXPECT_EQ(c["name"], json("007"));
}

TEST(Overrides, CreateIntermediateMappings) {
  // good.yaml lists its techniques ([channels_last, amp]); the override reaches into one.
  const json c = Config({"optimizations.amp.dtype=bf16", "train.optimizer.nesterov=true"});
  EXPECT_EQ(c["optimizations"]["amp"]["dtype"], json("bf16"));
  EXPECT_EQ(c["train"]["optimizer"]["nesterov"], json(true));
  const json added = LoadText("x.yaml", "name: x\nmodel: {name: mlp}\ndata: {source: fashion-mnist, batch_size: 1}\n",
                              Sets({"optimizations.channels_last.inputs=false"}), Schemas())
                         .config;
  EXPECT_EQ(added["optimizations"]["channels_last"]["inputs"], json(false));
}

TEST(Overrides, ListItemsByIndex) {
  EXPECT_EQ(Config({"data.shape.0=3"})["data"]["shape"], json::parse("[3, 28, 28]"));
  EXPECT_EQ(RenderFile("good.yaml", {"data.shape.3=1"}),
            "--set data.shape.3=1: error: cannot set 'data.shape.3': 'data.shape' is a list, not a mapping\n");
}

TEST(Overrides, LaterOverridesWin) {
  EXPECT_EQ(Config({"data.batch_size=8", "data.batch_size=16"})["data"]["batch_size"], json(16));
}

TEST(Overrides, OptimizationsAsAList) {
  const json c = Config({"optimizations=[amp]"});
  EXPECT_EQ(c["optimizations"].size(), 1u);
  EXPECT_TRUE(c["optimizations"].contains("amp"));
}

TEST(Overrides, ErrorsPointAtTheOverride) {
  EXPECT_EQ(RenderFile("good.yaml", {"data.batch_size=-1"}),
            "--set data.batch_size=-1: error: 'data.batch_size' must be >= 1, got -1\n");
  EXPECT_EQ(RenderFile("good.yaml", {"device=gpu"}),
            "--set device=gpu: error: unknown device 'gpu'\n"
            "note: expected 'auto', 'cpu', 'mps', 'cuda' or 'cuda:N'; did you mean 'cuda'?\n");
  EXPECT_EQ(RenderFile("good.yaml", {"optimizations.amp.dtype=fp8"}),
            "--set optimizations.amp.dtype=fp8: error: unknown dtype 'fp8'\n"
            "note: expected one of 'fp16', 'bf16'\n");
}

// A raw line break is not folded into a space, and the error's prefix shows it escaped on one
// line (issue 30, point 20).
TEST(Overrides, AValueWithALineBreakIsRefusedOnOneLine) {
  EXPECT_EQ(RenderFile("good.yaml", {"train.steps=5\n6"}),
            "--set train.steps=5\\n6: error: the value holds a line break; a --set value is one line\n"
            "note: write a list or a mapping on one line, e.g. --set 'model.hidden=[64, 32]'\n");
  EXPECT_EQ(RenderFile("good.yaml", {"device=\x1b[2Jcpu"}).rfind("--set device=\\e[2Jcpu: error: ", 0), 0u)
      << RenderFile("good.yaml", {"device=\x1b[2Jcpu"});
}

TEST(Overrides, UnknownKeyWithDidYouMean) {
  EXPECT_EQ(RenderFile("good.yaml", {"data.batchsize=3"}),
            "--set data.batchsize=3: error: unknown key 'batchsize' in 'data'\n"
            "note: expected one of 'batch_size', 'dtype', 'eval_labels', 'eval_path', 'label_dtype', 'labels', "
            "'normalize', 'num_classes', 'path', 'placement', 'produce_ms', 'scale', 'seq_len', 'shape', 'shuffle', "
            "'source', 'tokenizer', 'train_limit', 'val_fraction'; did you mean 'batch_size'?\n");
  EXPECT_EQ(
      RenderFile("good.yaml", {"precison=bf16"}),
      "--set precison=bf16: error: unknown key 'precison'\n"
      "note: expected one of 'data', 'description', 'device', 'infer', 'model', 'name', 'optimizations', 'order', "
      "'order_seed', 'precision', 'repeats', 'results', 'seed', 'sweep', 'task', 'threads', 'train', "
      "'trial_timeout_s'; "
      "did you mean 'precision'?\n");
}

TEST(Overrides, MalformedOverrides) {
  EXPECT_EQ(RenderFile("good.yaml", {"data.batch_size"}),
            "--set data.batch_size: error: expected 'key=value', got 'data.batch_size'\n"
            "note: e.g. --set data.batch_size=128\n");
  EXPECT_EQ(RenderFile("good.yaml", {"=3"}),
            "--set =3: error: invalid key ''\n"
            "note: expected a dotted path such as 'data.batch_size' or 'optimizations.amp.dtype'\n");
  EXPECT_EQ(RenderFile("good.yaml", {"data..batch_size=3"}),
            "--set data..batch_size=3: error: invalid key 'data..batch_size'\n"
            "note: expected a dotted path such as 'data.batch_size' or 'optimizations.amp.dtype'\n");
  EXPECT_EQ(RenderFile("good.yaml", {"data.shape=[1, 2"}),
            "--set data.shape=[1, 2: error: cannot parse value '[1, 2': end of sequence flow not found\n"
            "note: a '[' here has no matching ']'\n");
  EXPECT_EQ(RenderFile("good.yaml", {"data.batch_size.x=1"}),
            "--set data.batch_size.x=1: error: cannot set 'data.batch_size.x': 'data.batch_size' is integer 32, "
            "not a mapping\n");
}

TEST(Overrides, EmptyValueIsNull) {
  EXPECT_EQ(RenderFile("good.yaml", {"device="}), "--set device=: error: 'device' must be a string, got null\n");
}

TEST(Overrides, FileProblemsComeFirstThenOverrides) {
  EXPECT_EQ(RenderFile("negative_batch.yaml", {"seed=-2", "model.name=resnet5"}),
            "negative_batch.yaml:7:15: error: 'data.batch_size' must be >= 1, got -4\n"
            "    7 |   batch_size: -4\n"
            "      |               ^\n"
            "--set seed=-2: error: 'seed' must be >= 0, got -2\n"
            "--set model.name=resnet5: error: unknown model 'resnet5'\n"
            "note: expected one of 'mlp', 'cnn', 'resnet18', 'resnet50', 'gpt', 'torchscript', 'aoti', 'python'; did "
            "you mean 'resnet50'?\n");
}

TEST(Overrides, FixingAFileValueByOverride) { EXPECT_EQ(RenderFile("negative_batch.yaml", {"data.batch_size=4"}), ""); }

TEST(Overrides, StepsAndEpochsPointsAtTheOverride) {
  EXPECT_EQ(RenderFile("good.yaml", {"train.epochs=1"}),
            "--set train.epochs=1: error: 'train.epochs' cannot be used together with 'train.steps'\n"
            "note: 'train.steps' is set at line 17; measure either a number of steps or a number of epochs\n");
}

TEST(Overrides, MissingKeyInAMappingMadeByAnOverride) {
  EXPECT_EQ(RenderFile("good.yaml", {"model={num_classes: 10}"}),
            "--set model={num_classes: 10}: error: missing required key 'name' in 'model'\n"
            "note: 'name': one of the built-in models (gpt: a decoder-only transformer over the token ids of text "
            "data), torchscript (a TorchScript file: 'path'), aoti (an AOTInductor package, .pt2, for task: infer on "
            "LibTorch >= 2.6: 'path') or python (a builder function in a Python source file: 'path', 'builder', "
            "'kwargs'; runx compile makes it into TorchScript)\n");
}

}  // namespace
}  // namespace runx::spec::test
