// Text data and the gpt model in experiment files: their keys, and the located errors of a text
// that cannot be read or is too short for seq_len, and of a model that cannot read the data.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "spec/identity.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class TextKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short: the messages quote the text's path whole only up to 60 characters (spec/issue.cc), and
    // this test process's TMPDIR is its own (tests/support/private_tmpdir.cc), so no test name is needed.
    dir_ = fs::temp_directory_path() / "text_keys";
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    text_ = (dir_ / "t.txt").string();
    std::ofstream(text_) << std::string(1000, 'a');  // 1000 bytes: 900 training and 100 validation tokens
  }
  void TearDown() override { fs::remove_all(dir_); }
  /// An experiment of gpt on text data at `path` with `seq_len` (line 6) and `more` data keys.
  std::string Yaml(const std::string& path, const std::string& seq_len, const std::string& more = "") const {
    return "name: x\n"
           "model: {name: gpt, n_layer: 1}\n"
           "data:\n"
           "  source: text\n"
           "  path: " +
           path +
           "\n"
           "  seq_len: " +
           seq_len +
           "\n"
           "  batch_size: 8\n" +
           more;
  }
  fs::path dir_;
  std::string text_;
};

TEST_F(TextKeys, ValidWithEveryKey) {
  const auto e = LoadText(
      "x.yaml", Yaml(text_, "64", "  tokenizer: chars\n  val_fraction: 0.2\n  shuffle: false\n  train_limit: 4\n"), {},
      Schemas());
  EXPECT_EQ(e.config["data"]["tokenizer"], json("chars"));
  EXPECT_EQ(e.config["model"]["d_model"], json(128));  // schema defaults of gpt
  EXPECT_EQ(e.config["model"]["n_head"], json(4));
  EXPECT_FALSE(e.config["model"].contains("block_size"));  // absent: data.seq_len
  const json used = UsedConfig(e.config);
  EXPECT_EQ(used["data"]["path"], json(text_));
  EXPECT_EQ(used["data"]["seq_len"], json(64));
  EXPECT_EQ(used["model"]["n_layer"], json(1));
  EXPECT_FALSE(used["model"].contains("hidden"));  // mlp's
  // The input is the text's content: the same text elsewhere is the same trial.
  const auto copy = (dir_ / "copy.txt").string();
  fs::copy_file(text_, copy);
  EXPECT_EQ(IdentifyConfig(e.config).hash, IdentifyConfig(LoadText("x.yaml",
                                                                   Yaml(copy, "64",
                                                                        "  tokenizer: chars\n  val_fraction: 0.2\n"
                                                                        "  shuffle: false\n  train_limit: 4\n"),
                                                                   {}, Schemas())
                                                              .config)
                                               .hash);
}

TEST_F(TextKeys, GptKeysLeaveTheHashOfOtherModels) {
  const std::string mlp =
      "name: x\nmodel: {name: mlp}\ndata: {source: synthetic, shape: [4], num_classes: 2, batch_size: 8}\n";
  const json used = UsedConfig(LoadText("x.yaml", mlp, {}, Schemas()).config);
  for (const char* key : {"n_layer", "n_head", "d_model", "block_size"})
    EXPECT_FALSE(used["model"].contains(key)) << key;
  for (const char* key : {"tokenizer", "seq_len", "val_fraction"}) EXPECT_FALSE(used["data"].contains(key)) << key;
}

TEST_F(TextKeys, PathAndSeqLenAreRequired) {
  EXPECT_EQ(
      RenderText("name: x\nmodel: {name: gpt}\ndata: {source: text, batch_size: 8}\n"),
      "x.yaml:3:1: error: missing required key 'path' in 'data'\n"
      "    3 | data: {source: text, batch_size: 8}\n"
      "      | ^\n"
      "note: text data needs 'path' (a text file, plain or gzip, or a folder of them) and 'seq_len' (input tokens "
      "per sample), e.g. path: /usr/share/games/fortunes ('apt-get install fortunes'), seq_len: 128\n"
      "x.yaml:3:1: error: missing required key 'seq_len' in 'data'\n"
      "    3 | data: {source: text, batch_size: 8}\n"
      "      | ^\n"
      "note: text data needs 'path' (a text file, plain or gzip, or a folder of them) and 'seq_len' (input tokens "
      "per sample), e.g. path: /usr/share/games/fortunes ('apt-get install fortunes'), seq_len: 128\n");
}

TEST_F(TextKeys, AMissingFileIsAnErrorAtItsPath) {
  const std::string missing = (dir_ / "nope.txt").string();
  EXPECT_EQ(RenderText(Yaml(missing, "64")),
            "x.yaml:5:9: error: cannot read '" + missing +
                "': No such file or directory\n"
                "    5 |   path: " +
                missing +
                "\n"
                "      |         ^\n"
                "note: text data reads a text file (plain or gzip) or a folder of them, e.g. path: "
                "/usr/share/games/fortunes ('apt-get install fortunes'), seq_len: 128\n");
  // The same through an override: named by it.
  EXPECT_EQ(RenderText(Yaml(text_, "64"), {"data.path=" + missing}),
            "--set data.path=" + missing + ": error: cannot read '" + missing +
                "': No such file or directory\n"
                "note: text data reads a text file (plain or gzip) or a folder of them, e.g. path: "
                "/usr/share/games/fortunes ('apt-get install fortunes'), seq_len: 128\n");
}

TEST_F(TextKeys, SeqLenLongerThanATrainingSplit) {
  EXPECT_EQ(RenderText(Yaml(text_, "4096")),
            "x.yaml:6:12: error: 'data.seq_len' 4096 does not fit the training split of '" + text_ +
                "': 900 tokens\n"
                "    6 |   seq_len: 4096\n"
                "      |            ^\n"
                "note: a sample takes seq_len + 1 = 4097 tokens (its targets are its inputs shifted by one); '" +
                text_ +
                "' has 1000 bytes, of which the last 100 are held out for validation (data.val_fraction 0.1): lower "
                "data.seq_len or give a longer text\n");
  // chars: the bytes bound the characters from above.
  EXPECT_EQ(RenderText(Yaml(text_, "1000", "  tokenizer: chars\n  val_fraction: 0\n")),
            "x.yaml:6:12: error: 'data.seq_len' 1000 does not fit the training split of '" + text_ +
                "': at most 1000 tokens\n"
                "    6 |   seq_len: 1000\n"
                "      |            ^\n"
                "note: a sample takes seq_len + 1 = 1001 tokens (its targets are its inputs shifted by one); '" +
                text_ +
                "' has 1000 bytes (a character is one or more of them): lower data.seq_len or give a longer text\n");
  EXPECT_EQ(RenderText(Yaml(text_, "999", "  val_fraction: 0\n")), "");  // 999 inputs + 1 target
}

TEST_F(TextKeys, SeqLenLongerThanTheValidationSplit) {
  EXPECT_EQ(
      RenderText(Yaml(text_, "100")),
      "x.yaml:6:12: error: 'data.seq_len' 100 does not fit the validation split of '" + text_ +
          "': 100 tokens\n"
          "    6 |   seq_len: 100\n"
          "      |            ^\n"
          "note: a sample takes seq_len + 1 = 101 tokens (its targets are its inputs shifted by one); the validation "
          "split is the last 0.1 of the text's tokens (data.val_fraction): raise it, lower data.seq_len, or set it "
          "to 0 for no validation\n");
  EXPECT_EQ(RenderText(Yaml(text_, "99")), "");
}

TEST_F(TextKeys, TokenizerIsBytesOrChars) {
  EXPECT_EQ(RenderText(Yaml(text_, "64", "  tokenizer: char\n")),
            "x.yaml:8:14: error: unknown tokenizer 'char'\n"
            "    8 |   tokenizer: char\n"
            "      |              ^\n"
            "note: expected one of 'bytes', 'chars'; did you mean 'chars'?\n");
}

TEST_F(TextKeys, TextKeysWithAnotherSource) {
  EXPECT_EQ(RenderText("name: x\nmodel: {name: mlp}\n"
                       "data: {source: synthetic, shape: [4], num_classes: 2, batch_size: 8, seq_len: 16}\n"),
            "x.yaml:3:70: error: 'data.seq_len' is not used by synthetic data\n"
            "    3 | data: {source: synthetic, shape: [4], num_classes: 2, batch_size: 8, seq_len: 16}\n"
            "      |                                                                      ^\n"
            "note: 'data.seq_len' is for text data\n");
}

TEST_F(TextKeys, GptReadsTokenIdsAndOnlyGptDoes) {
  EXPECT_EQ(
      RenderText("name: x\nmodel: {name: gpt}\ndata: {source: synthetic, shape: [4], num_classes: 2, batch_size: 8}\n"),
      "x.yaml:2:15: error: model 'gpt' reads token ids, and synthetic data gives float samples\n"
      "    2 | model: {name: gpt}\n"
      "      |               ^\n"
      "note: train gpt on text data, e.g. data: {source: text, path: /usr/share/games/fortunes, seq_len: 128, "
      "batch_size: 32}\n");
  EXPECT_EQ(RenderText(Yaml(text_, "64"), {"model.name=mlp"}),
            "--set model.name=mlp: error: model 'mlp' reads float samples, and text data gives token ids\n"
            "note: text data trains a language model: use model 'gpt', or a TorchScript language model (model: "
            "{name: torchscript, path: FILE}) mapping token ids [batch, seq_len] to logits [batch, seq_len, "
            "vocabulary]\n");
}

TEST_F(TextKeys, GptShapes) {
  EXPECT_EQ(RenderText(Yaml(text_, "64"), {"model.d_model=100", "model.n_head=3"}),
            "--set model.d_model=100: error: 'model.d_model' 100 is not a multiple of 'model.n_head' 3\n"
            "note: each attention head takes d_model / n_head of the token vector's dimensions\n");
  // n_head from the schema's default (4).
  EXPECT_EQ(RenderText(Yaml(text_, "64"), {"model.d_model=90"}),
            "--set model.d_model=90: error: 'model.d_model' 90 is not a multiple of 'model.n_head' 4\n"
            "note: each attention head takes d_model / n_head of the token vector's dimensions\n");
  EXPECT_EQ(RenderText(Yaml(text_, "64"), {"model.block_size=32"}),
            "--set model.block_size=32: error: 'model.block_size' 32 is shorter than 'data.seq_len' 64\n"
            "note: block_size is the longest context gpt reads (the rows of its position embedding); absent, it is "
            "data.seq_len\n");
  EXPECT_EQ(RenderText(Yaml(text_, "64"), {"model.num_classes=10"}),
            "--set model.num_classes=10: error: 'model.num_classes' is not used by model 'gpt'\n"
            "note: gpt's vocabulary is the text's: 256 tokens with data.tokenizer bytes, its distinct characters with "
            "chars\n");
}

TEST_F(TextKeys, ASweepOverSeqLenChecksEachValue) {
  EXPECT_EQ(RenderText(Yaml(text_, "64", "sweep: {axes: {data.seq_len: [32, 4096]}}\n")),
            "x.yaml:8:35: error: 'data.seq_len' 4096 does not fit the training split of '" + text_ +
                "': 900 tokens\n"
                "    8 | sweep: {axes: {data.seq_len: [32, 4096]}}\n"
                "      |                                   ^\n"
                "note: a sample takes seq_len + 1 = 4097 tokens (its targets are its inputs shifted by one); '" +
                text_ +
                "' has 1000 bytes, of which the last 100 are held out for validation (data.val_fraction 0.1): lower "
                "data.seq_len or give a longer text\n");
}

}  // namespace
}  // namespace runx::spec::test
