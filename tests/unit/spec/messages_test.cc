// The whole rendered message for each kind of mistake, from real files under data/.
#include <gtest/gtest.h>

#include "test_util.h"

namespace runx::spec::test {
namespace {

TEST(Messages, YamlSyntaxError) {
  EXPECT_EQ(RenderFile("bad_yaml.yaml"),
            "bad_yaml.yaml:4:2: error: end of map not found\n"
            "    4 |  data: {source: synthetic}\n"
            "      |  ^\n"
            "note: check the indentation of this line against the lines above; quote values that contain ': '\n");
}

TEST(Messages, UnknownKey) {
  // Only the misspelt key: that 'batch_size' is then missing is the same mistake.
  EXPECT_EQ(RenderFile("unknown_key.yaml"),
            "unknown_key.yaml:7:3: error: unknown key 'batchsize' in 'data'\n"
            "    7 |   batchsize: 32\n"
            "      |   ^\n"
            "note: expected one of 'batch_size', 'dtype', 'eval_labels', 'eval_path', 'label_dtype', 'labels', "
            "'normalize', 'num_classes', 'path', 'placement', 'produce_ms', 'scale', 'seq_len', 'shape', 'shuffle', "
            "'source', 'tokenizer', 'train_limit', 'val_fraction'; did you mean 'batch_size'?\n");
}

TEST(Messages, WrongType) {
  EXPECT_EQ(RenderFile("wrong_type.yaml"),
            "wrong_type.yaml:7:15: error: unknown batch size 'abc'\n"
            "    7 |   batch_size: abc\n"
            "      |               ^\n"
            "note: expected a positive integer or 'auto'\n");
}

TEST(Messages, NegativeBatchSize) {
  EXPECT_EQ(RenderFile("negative_batch.yaml"),
            "negative_batch.yaml:7:15: error: 'data.batch_size' must be >= 1, got -4\n"
            "    7 |   batch_size: -4\n"
            "      |               ^\n");
}

TEST(Messages, MisspeltModel) {
  EXPECT_EQ(RenderFile("bad_model.yaml"),
            "bad_model.yaml:9:9: error: unknown model 'resnt50'\n"
            "    9 |   name: resnt50\n"
            "      |         ^\n"
            "note: expected one of 'mlp', 'cnn', 'resnet18', 'resnet50', 'gpt', 'torchscript', 'aoti', 'python'; did "
            "you mean 'resnet50'?\n");
}

TEST(Messages, MisspeltTechnique) {
  EXPECT_EQ(RenderFile("bad_technique.yaml"),
            "bad_technique.yaml:5:3: error: unknown technique 'chanels_last'\n"
            "    5 |   chanels_last: {}\n"
            "      |   ^\n"
            "note: expected one of 'amp', 'channels_last'; did you mean 'channels_last'?\n");
}

TEST(Messages, MisspeltDevice) {
  EXPECT_EQ(RenderFile("bad_device.yaml"),
            "bad_device.yaml:2:9: error: unknown device 'cdua'\n"
            "    2 | device: cdua\n"
            "      |         ^\n"
            "note: expected 'auto', 'cpu', 'mps', 'cuda' or 'cuda:N'; did you mean 'cuda'?\n");
}

TEST(Messages, MissingRequiredKeyPointsAtTheMappingThatLacksIt) {
  EXPECT_EQ(RenderFile("missing_model.yaml"),
            "missing_model.yaml:1:1: error: missing required key 'model'\n"
            "    1 | name: no-model\n"
            "      | ^\n"
            "note: 'model': the network to train, e.g. {name: resnet50, num_classes: 1000}\n");
  EXPECT_EQ(RenderText("name: x\nmodel: {name: mlp}\ndata:\n  source: fashion-mnist\n"),
            "x.yaml:3:1: error: missing required key 'batch_size' in 'data'\n"
            "    3 | data:\n"
            "      | ^\n"
            "note: 'batch_size': samples per step: a positive integer, or 'auto' (set by the auto_batch technique "
            "before training)\n");
}

TEST(Messages, EmptyFile) {
  const std::string expected =
      "error: empty experiment file; expected a mapping with at least 'name', 'model' and 'data'\n";
  EXPECT_EQ(RenderFile("empty.yaml"), "empty.yaml: " + expected);
  EXPECT_EQ(RenderFile("comments_only.yaml"), "comments_only.yaml: " + expected);
}

TEST(Messages, TopLevelNotAMapping) {
  EXPECT_EQ(RenderFile("top_level_list.yaml"),
            "top_level_list.yaml:1:1: error: expected a mapping at the top level, got a list\n"
            "    1 | - name: a-list\n"
            "      | ^\n"
            "note: an experiment is a mapping with at least 'name', 'model' and 'data'\n");
  EXPECT_EQ(RenderText("just words\n"),
            "x.yaml:1:1: error: expected a mapping at the top level, got string 'just words'\n"
            "    1 | just words\n"
            "      | ^\n"
            "note: an experiment is a mapping with at least 'name', 'model' and 'data'\n");
}

TEST(Messages, ValuesOfTheWrongShapeGetAHint) {
  EXPECT_EQ(RenderFile("wrong_shapes.yaml"),
            "wrong_shapes.yaml:2:8: error: 'model' must be a mapping, got string 'resnet50'\n"
            "    2 | model: resnet50\n"
            "      |        ^\n"
            "note: write the model as a mapping, e.g. 'model: {name: resnet50, num_classes: 1000}'\n"
            "wrong_shapes.yaml:5:8: error: 'optimizations.amp' must be a mapping, got integer 3\n"
            "    5 |   amp: 3\n"
            "      |        ^\n"
            "note: write a technique's parameters as a mapping, e.g. 'amp: {dtype: bf16}', or '{}' for its defaults\n");
}

TEST(Messages, DuplicateKey) {
  EXPECT_EQ(RenderFile("duplicate_key.yaml"),
            "duplicate_key.yaml:6:3: error: duplicate key 'batch_size' in 'data'\n"
            "    6 |   batch_size: 128\n"
            "      |   ^\n"
            "note: first defined at line 5\n");
}

TEST(Messages, TechniqueListForm) {
  EXPECT_EQ(RenderFile("list_optimizations.yaml"),
            "list_optimizations.yaml:4:37: error: 'optimizations[2]' must be a technique name, got integer 7\n"
            "    4 | optimizations: [channels_last, amp, 7, amp]\n"
            "      |                                     ^\n"
            "note: list techniques by name, e.g. [channels_last, amp], or map each to its parameters\n"
            "list_optimizations.yaml:4:40: error: technique 'amp' is listed twice\n"
            "    4 | optimizations: [channels_last, amp, 7, amp]\n"
            "      |                                        ^\n"
            "note: list each technique once\n");
}

TEST(Messages, Yaml11Booleans) {
  EXPECT_EQ(RenderFile("yes_no.yaml"),
            "yes_no.yaml:3:56: error: 'data.shuffle' must be a boolean, got string 'no'\n"
            "    3 | data: {source: fashion-mnist, batch_size: 64, shuffle: no}\n"
            "      |                                                        ^\n"
            "note: YAML 1.2 reads 'no' as a string; write true or false\n");
}

TEST(Messages, StepsAndEpochsAreExclusive) {
  EXPECT_EQ(RenderFile("steps_and_epochs.yaml"),
            "steps_and_epochs.yaml:6:3: error: 'train.steps' cannot be used together with 'train.epochs'\n"
            "    6 |   steps: 100\n"
            "      |   ^\n"
            "note: 'train.epochs' is set at line 5; measure either a number of steps or a number of epochs\n");
}

TEST(Messages, AnAotiPackageIsInferenceOnly) {
  EXPECT_EQ(RenderFile("aoti_train.yaml"),
            "aoti_train.yaml:2:15: error: model 'aoti' runs an AOTInductor package, which is inference-only\n"
            "    2 | model: {name: aoti, path: resnet50.pt2}\n"
            "      |               ^\n"
            "note: add 'task: infer' to measure it; AOTInductor compiles forward graphs only, so to train a model "
            "from a file export it with torch.jit and use model: {name: torchscript}\n");
}

TEST(Messages, SyntheticDataNeedsShapeAndClasses) {
  const std::string note =
      "note: synthetic data needs 'shape' and 'num_classes', e.g. shape: [3, 224, 224], num_classes: 1000\n";
  EXPECT_EQ(RenderFile("synthetic_no_shape.yaml"),
            "synthetic_no_shape.yaml:3:1: error: missing required key 'shape' in 'data'\n"
            "    3 | data:\n"
            "      | ^\n" +
                note +
                "synthetic_no_shape.yaml:3:1: error: missing required key 'num_classes' in 'data'\n"
                "    3 | data:\n"
                "      | ^\n" +
                note);
}

TEST(Messages, TechniqueParameters) {
  EXPECT_EQ(RenderText("name: x\nmodel: {name: mlp}\ndata: {source: fashion-mnist, batch_size: 1}\n"
                       "optimizations:\n  amp: {dtyp: bf16, growth_interval: 0}\n"),
            "x.yaml:5:9: error: unknown key 'dtyp' in 'optimizations.amp'\n"
            "    5 |   amp: {dtyp: bf16, growth_interval: 0}\n"
            "      |         ^\n"
            "note: expected one of 'backoff_factor', 'dtype', 'growth_factor', 'growth_interval', 'init_scale', "
            "'loss_scale'; did you mean 'dtype'?\n"
            "x.yaml:5:38: error: 'optimizations.amp.growth_interval' must be >= 1, got 0\n"
            "    5 |   amp: {dtyp: bf16, growth_interval: 0}\n"
            "      |                                      ^\n");
}

TEST(Messages, AVariantWrittenAsAListOfTechniques) {
  // A sweep over technique sets written as sets: the axis lists techniques, each switched on and off.
  EXPECT_EQ(RenderText("name: x\nmodel: {name: mlp}\ndata: {source: fashion-mnist, batch_size: 1}\n"
                       "sweep:\n  axes:\n    optimizations: [[], [channels_last]]\n"),
            "x.yaml:6:21: error: 'sweep.axes.optimizations[0]' must be a string, got a list\n"
            "    6 |     optimizations: [[], [channels_last]]\n"
            "      |                     ^\n"
            "note: each item names one technique, which the sweep switches on and off: 'optimizations: "
            "[channels_last]' gives the variants without it and with it (a variant is not written as a list)\n"
            "x.yaml:6:25: error: 'sweep.axes.optimizations[1]' must be a string, got a list\n"
            "    6 |     optimizations: [[], [channels_last]]\n"
            "      |                         ^\n"
            "note: each item names one technique, which the sweep switches on and off: 'optimizations: "
            "[channels_last]' gives the variants without it and with it (a variant is not written as a list)\n");
}

TEST(Messages, NoTechniquesInstalled) {
  const SchemaSet none = SchemaSet::Load({kData + "/no-such-dir"});
  const auto diags = ValidateText("x.yaml",
                                  "name: x\nmodel: {name: mlp}\ndata: {source: fashion-mnist, batch_size: 1}\n"
                                  "optimizations: [amp]\n",
                                  {}, none);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].message, "unknown technique 'amp'");
  EXPECT_EQ(diags[0].notes, std::vector<std::string>{"no techniques are installed in '" + kData + "/no-such-dir'"});
}

TEST(Messages, EveryProblemOfAFileSortedByLine) {
  EXPECT_EQ(RenderFile("many_errors.yaml"),
            "many_errors.yaml:1:7: error: invalid name 'many errors'\n"
            "    1 | name: many errors\n"
            "      |       ^\n"
            "note: expected letters, digits, '_', '.' and '-', starting with a letter or digit\n"
            "many_errors.yaml:2:9: error: unknown device 'gpu'\n"
            "    2 | device: gpu\n"
            "      |         ^\n"
            "note: expected 'auto', 'cpu', 'mps', 'cuda' or 'cuda:N'; did you mean 'cuda'?\n"
            "many_errors.yaml:3:12: error: unknown precision 'fp8'\n"
            "    3 | precision: fp8\n"
            "      |            ^\n"
            "note: expected one of 'fp32', 'tf32', 'fp16', 'bf16'\n"
            "many_errors.yaml:5:9: error: unknown model 'ResNet50'\n"
            "    5 |   name: ResNet50\n"
            "      |         ^\n"
            "note: expected one of 'mlp', 'cnn', 'resnet18', 'resnet50', 'gpt', 'torchscript', 'aoti', 'python'; did "
            "you mean 'resnet50'?\n"
            "many_errors.yaml:6:12: error: 'model.dropout' must be < 1, got 1.5\n"
            "    6 |   dropout: 1.5\n"
            "      |            ^\n"
            "many_errors.yaml:7:1: error: missing required key 'num_classes' in 'data'\n"
            "    7 | data:\n"
            "      | ^\n"
            "note: synthetic data needs 'shape' and 'num_classes', e.g. shape: [3, 224, 224], num_classes: 1000\n"
            "many_errors.yaml:9:15: error: 'data.batch_size' must be >= 1, got 0\n"
            "    9 |   batch_size: 0\n"
            "      |               ^\n"
            "many_errors.yaml:10:10: error: 'data.shape' must not be empty\n"
            "   10 |   shape: []\n"
            "      |          ^\n"
            "many_errors.yaml:12:21: error: unknown optimizer 'adam'\n"
            "   12 |   optimizer: {name: adam, lr: 0}\n"
            "      |                     ^\n"
            "note: expected one of 'sgd', 'adamw'; did you mean 'adamw'?\n"
            "many_errors.yaml:12:31: error: 'train.optimizer.lr' must be > 0, got 0\n"
            "   12 |   optimizer: {name: adam, lr: 0}\n"
            "      |                               ^\n"
            "many_errors.yaml:14:3: error: 'train.epochs' cannot be used together with 'train.steps'\n"
            "   14 |   epochs: 2\n"
            "      |   ^\n"
            "note: 'train.steps' is set at line 13; measure either a number of steps or a number of epochs\n"
            "many_errors.yaml:16:16: error: unknown dtype 'float16'\n"
            "   16 |   amp: {dtype: float16, loss_scale: big}\n"
            "      |                ^\n"
            "note: expected one of 'fp16', 'bf16'\n"
            "many_errors.yaml:16:37: error: 'optimizations.amp.loss_scale' must be 'auto', 'dynamic', 'none' or a "
            "number > 0, got string 'big'\n"
            "   16 |   amp: {dtype: float16, loss_scale: big}\n"
            "      |                                     ^\n"
            "many_errors.yaml:17:27: error: 'optimizations.channels_last.inputs' must be a boolean, got string 'yes'\n"
            "   17 |   channels_last: {inputs: yes}\n"
            "      |                           ^\n"
            "note: YAML 1.2 reads 'yes' as a string; write true or false\n"
            "many_errors.yaml:18:10: error: 'results' must be a string, got integer 3\n"
            "   18 | results: 3\n"
            "      |          ^\n");
}

TEST(Messages, SpecErrorCountsTheProblems) {
  try {
    Load(kData + "/negative_batch.yaml", {}, Schemas());
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    std::string text = e.Render();
    for (size_t at; (at = text.find(kData + "/")) != std::string::npos;) text.erase(at, kData.size() + 1);
    EXPECT_EQ(text,
              "negative_batch.yaml:7:15: error: 'data.batch_size' must be >= 1, got -4\n"
              "    7 |   batch_size: -4\n"
              "      |               ^\n"
              "1 error in negative_batch.yaml\n");
  }
}

}  // namespace
}  // namespace runx::spec::test
