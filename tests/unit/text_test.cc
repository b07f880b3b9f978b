// Text data: tokenization (bytes, chars), the pack written once and mapped, blocks and their
// next-token targets, the held-out split, and token ids reaching the model as integers.
#include "data/text.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "../remove_tree.h"
#include "data/npy.h"
#include "data/pack.h"
#include "models/models.h"
#include "trial/build.h"
#include "trial/loader.h"
#include "trial/trial.h"
#include "trial_support.h"

namespace runx::data {
namespace {

namespace fs = std::filesystem;

class Text : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_text_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_ / "cache");
    const char* before = std::getenv("RUNX_CACHE_DIR");
    cache_before_ = before ? before : "";
    setenv("RUNX_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    if (cache_before_.empty())
      unsetenv("RUNX_CACHE_DIR");
    else
      setenv("RUNX_CACHE_DIR", cache_before_.c_str(), 1);
    runx::testing::RemoveTree(dir_.string());
  }
  std::string Write(const std::string& name, const std::string& bytes) const {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  nlohmann::json Config(const std::string& path, int64_t seq_len, nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json d{{"source", "text"}, {"path", path}, {"seq_len", seq_len}, {"batch_size", 2}, {"shuffle", false}};
    d.merge_patch(extra);
    return d;
  }
  std::unique_ptr<TextSource> Open(const nlohmann::json& d) { return std::make_unique<TextSource>(d, torch::kCPU, 7); }
  static std::string ErrorOf(const std::function<void()>& f) {
    try {
      f();
    } catch (const DataError& e) {
      return e.what();
    }
    return "(no error)";
  }
  /// The bytes of `t` (1-D integers) as a string.
  static std::string Bytes(const torch::Tensor& t) {
    const auto c = t.to(torch::kLong).contiguous();
    std::string s;
    for (int64_t i = 0; i < c.numel(); ++i) s += static_cast<char>(c.data_ptr<int64_t>()[i]);
    return s;
  }
  fs::path dir_;
  std::string cache_before_;
};

TEST_F(Text, BytesAreTheirOwnIds) {
  const std::string text = "Hello, world!\n\xff\x01";
  const auto src = Open(Config(Write("a.txt", text), 4, {{"val_fraction", 0}}));
  EXPECT_EQ(src->pack().tokenizer, Tokenizer::kBytes);
  EXPECT_EQ(src->pack().vocab_size, 256);
  EXPECT_EQ(src->num_classes(), 256);
  ASSERT_EQ(src->tokens().scalar_type(), torch::kUInt8);
  EXPECT_EQ(Bytes(src->tokens()), text);
  EXPECT_EQ(DecodeTokens(src->pack(), src->tokens()), text);
}

TEST_F(Text, CharsAreNumberedByCodePoint) {
  const std::string text =
      "b\xc3\xa9"
      "a\xe2\x9c\x93"
      "ab";  // "béa✓ab"
  const auto src = Open(Config(Write("a.txt", text), 2, {{"tokenizer", "chars"}, {"val_fraction", 0}}));
  EXPECT_EQ(src->pack().vocab_size, 4);  // a b é ✓
  EXPECT_EQ(src->pack().chars, (std::vector<char32_t>{U'a', U'b', U'\u00e9', U'\u2713'}));
  EXPECT_EQ(src->tokens().scalar_type(), torch::kUInt8);
  EXPECT_TRUE(torch::equal(src->tokens().to(torch::kLong), torch::tensor({1, 2, 0, 3, 0, 1}, torch::kLong)));
  EXPECT_EQ(DecodeTokens(src->pack(), src->tokens()), text);
  // The mapping is recorded with the pack and in the trial's environment.
  const auto vocab = nlohmann::json::parse(std::ifstream(src->pack().dir + "/vocab.json"));
  EXPECT_EQ(vocab["vocab"], nlohmann::json::parse(R"(["a", "b", "\u00e9", "\u2713"])"));
  bool recorded = false;
  for (const auto& [key, value] : src->Facts())
    if (key == "data.vocab") recorded = value == vocab["vocab"].dump();
  EXPECT_TRUE(recorded);
}

TEST_F(Text, ManyCharsTakeAWiderDtype) {
  std::string text;
  for (char32_t c = 0x100; c < 0x300; ++c) {  // 512 two-byte characters
    text += static_cast<char>(0xC0 | (c >> 6));
    text += static_cast<char>(0x80 | (c & 0x3F));
  }
  const auto src = Open(Config(Write("a.txt", text), 8, {{"tokenizer", "chars"}}));
  EXPECT_EQ(src->pack().vocab_size, 512);
  EXPECT_EQ(src->tokens().scalar_type(), torch::kInt16);
  EXPECT_TRUE(torch::equal(src->tokens().to(torch::kLong), torch::arange(512, torch::kLong)));
}

TEST_F(Text, CharsNeedUtf8) {
  const auto path = Write("latin1.txt", "caf\xe9!");
  EXPECT_EQ(ErrorOf([&] {
              Open(Config(path, 2, {{"tokenizer", "chars"}}));
            }),
            "'" + path + "' is not UTF-8 text: byte 0xe9 at offset 3; read it with data.tokenizer: bytes");
  const auto cut = Write("cut.txt", "ab\xe2\x9c");
  EXPECT_EQ(ErrorOf([&] {
              Open(Config(cut, 1, {{"tokenizer", "chars"}}));
            }),
            "'" + cut +
                "' is not UTF-8 text: it ends inside a character (from byte 2); read it with data.tokenizer: "
                "bytes");
  const auto overlong = Write("overlong.txt", "a\xc0\xafz");
  EXPECT_EQ(ErrorOf([&] {
              Open(Config(overlong, 1, {{"tokenizer", "chars"}}));
            }),
            "'" + overlong + "' is not UTF-8 text: byte 0xc0 at offset 1; read it with data.tokenizer: bytes");
}

TEST_F(Text, GzipAndFoldersReadAsOneText) {
  fs::create_directories(dir_ / "corpus");
  Write("corpus/1.txt", "first ");
  const auto gz = (dir_ / "corpus" / "2.txt.gz").string();
  gzFile f = gzopen(gz.c_str(), "wb");
  gzputs(f, "second");
  gzclose(f);
  const auto src = Open(Config((dir_ / "corpus").string(), 2, {{"val_fraction", 0}}));
  EXPECT_EQ(Bytes(src->tokens()), "first second");
}

TEST_F(Text, BlocksAndTheirNextTokenTargets) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += static_cast<char>(i);  // token i at position i
  const auto src = Open(Config(Write("a.txt", text), 8, {{"val_fraction", 0.2}}));
  // 80 training tokens: (80 - 1) / 8 = 9 blocks (a 10th would need token 80 as its last target).
  EXPECT_EQ(src->split().train, 80);
  EXPECT_EQ(src->split().val, 20);
  ASSERT_EQ(src->batches_per_epoch(), 4);  // 9 blocks, batches of 2
  EXPECT_EQ(src->sample_shape(), (std::vector<int64_t>{8}));
  for (int64_t batch = 0; batch < 4; ++batch) {
    const Batch b = src->Get(batch);
    ASSERT_EQ(b.input.sizes(), (c10::IntArrayRef{2, 8}));
    for (int64_t row = 0; row < 2; ++row) {
      const int64_t block = batch * 2 + row;
      EXPECT_TRUE(torch::equal(b.input[row].to(torch::kLong), torch::arange(block * 8, block * 8 + 8)));
      EXPECT_TRUE(torch::equal(b.target[row].to(torch::kLong), torch::arange(block * 8 + 1, block * 8 + 9)));
    }
  }
  // Unshuffled, a batch is a view of the mapped token file: no copy.
  EXPECT_EQ(src->Get(1).input.data_ptr<uint8_t>(), src->tokens().data_ptr<uint8_t>() + 16);
}

TEST_F(Text, TheValidationSplitIsTheTextsEndAndDisjoint) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += static_cast<char>(i);
  const auto src = Open(Config(Write("a.txt", text), 8, {{"val_fraction", 0.25}, {"shuffle", true}}));
  // Training reads tokens [0, 150) only, inputs and targets alike, in every epoch's order.
  int64_t train_max = -1;
  for (int64_t i = 0; i < 2 * src->batches_per_epoch(); ++i) {
    const Batch b = src->Get(i);
    train_max = std::max({train_max, b.input.max().item<int64_t>(), b.target.max().item<int64_t>()});
  }
  EXPECT_EQ(train_max, 144);  // 149 / 8 = 18 blocks: the last target is token 144
  const auto eval = src->EvalSet();
  ASSERT_TRUE(eval.has_value());
  // 50 tokens [150, 200): (50 - 1) / 8 = 6 blocks from token 150.
  ASSERT_EQ(eval->input.sizes(), (c10::IntArrayRef{6, 8}));
  EXPECT_EQ(eval->input.scalar_type(), torch::kLong);
  EXPECT_TRUE(torch::equal(eval->input.flatten(), torch::arange(150, 198)));
  EXPECT_TRUE(torch::equal(eval->target.flatten(), torch::arange(151, 199)));
  EXPECT_FALSE(Open(Config(Write("b.txt", text), 8, {{"val_fraction", 0}}))->EvalSet().has_value());
}

// data.unigram_loss: the validation tokens' cross entropy under the training split's byte
// frequencies, each count plus one, worked out by hand.
TEST_F(Text, TheUnigramLossIsTheFrequencyModelsLossOnTheValidationSplit) {
  std::string text;
  for (int i = 0; i < 25; ++i) text += "aaab";  // 100 bytes: val_fraction 0.2 -> the last 20 are held out
  const auto fact = [](const TextSource& src) {
    for (const auto& [key, value] : src.Facts())
      if (key == "data.unigram_loss") return std::stod(value);
    return std::nan("");
  };
  // Training: 60 'a', 20 'b' of 80; plus one each over 256 ids: p(a) = 61/336, p(b) = 21/336.
  // Validation: 15 'a', 5 'b'.
  const double want = -(15 * std::log(61.0 / 336) + 5 * std::log(21.0 / 336)) / 20;
  EXPECT_NEAR(fact(*Open(Config(Write("a.txt", text), 4, {{"val_fraction", 0.2}}))), want, 1e-4);
  // Without a validation split: the training split's entropy under the same smoothed frequencies.
  const double p_a = 76.0 / 356, p_b = 26.0 / 356, p_other = 1.0 / 356;
  const double entropy = -(p_a * std::log(p_a) + p_b * std::log(p_b) + 254 * p_other * std::log(p_other));
  EXPECT_NEAR(fact(*Open(Config(Write("b.txt", text), 4, {{"val_fraction", 0}}))), entropy, 1e-4);
}

TEST_F(Text, PackedOnceThenMapped) {
  const auto path = Write("a.txt", std::string(5000, 'x') + "the end\n");
  const auto first = Open(Config(path, 16));
  const std::string tokens = first->pack().tokens_path();
  struct stat before {};
  ASSERT_EQ(::stat(tokens.c_str(), &before), 0);
  // The pack is an ordinary .npy file of the ids, under the cache folder.
  EXPECT_EQ(fs::path(tokens).parent_path().parent_path(), dir_ / "cache" / "text");
  EXPECT_TRUE(torch::equal(LoadNpy(tokens), first->tokens()));
  const auto second = Open(Config(path, 32, {{"val_fraction", 0.5}}));
  struct stat after {};
  ASSERT_EQ(::stat(tokens.c_str(), &after), 0);
  EXPECT_EQ(second->pack().tokens_path(), tokens);
  EXPECT_EQ(after.st_ino, before.st_ino);  // read, not written again
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  // Another text (or tokenizer) is another pack.
  Write("a.txt", std::string(5000, 'y') + "the end\n");
  EXPECT_NE(Open(Config(path, 16))->pack().dir, first->pack().dir);
  EXPECT_NE(Open(Config(path, 16, {{"tokenizer", "chars"}}))->pack().dir, first->pack().dir);
}

TEST_F(Text, WhatDoesNotFitIsNamed) {
  const auto path = Write("a.txt", std::string(100, 'a'));
  EXPECT_EQ(ErrorOf([&] { Open(Config(path, 90)); }),
            "text: data.seq_len 90 does not fit the training split of '" + path +
                "': 90 tokens; a sample takes seq_len + 1 = 91 tokens (its targets are its inputs shifted by one): "
                "lower data.seq_len or give a longer text");
  EXPECT_EQ(ErrorOf([&] { Open(Config(path, 10)); }),
            "text: data.seq_len 10 does not fit the validation split of '" + path +
                "': 10 tokens; a sample takes seq_len + 1 = 11 tokens (its targets are its inputs shifted by one): "
                "raise data.val_fraction, lower data.seq_len, or set data.val_fraction to 0");
  EXPECT_EQ(ErrorOf([&] { Open(Config(Write("empty.txt", ""), 4)); }),
            "there is no text in '" + (dir_ / "empty.txt").string() + "'");
  EXPECT_EQ(ErrorOf([&] { Open(Config((dir_ / "none.txt").string(), 4)); }),
            "text data.path: cannot read '" + (dir_ / "none.txt").string() + "': No such file or directory");
  EXPECT_EQ(ErrorOf([&] {
              Open(Config(path, 4, {{"batch_size", 100}}));
            }),
            "text: batch size 100 does not fit the training split (22 samples)");
}

TEST_F(Text, TokenIdsReachTheModelAsIntegers) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += static_cast<char>('a' + i % 26);
  nlohmann::json config =
      runx::testing::TinyConfig({{"model", {{"name", "gpt"}, {"n_layer", 1}, {"n_head", 2}, {"d_model", 16}}},
                                 {"data", Config(Write("a.txt", text), 16)}});
  config["data"].erase("shape");
  config["data"].erase("num_classes");
  runx::testing::TrialHarness h(config);
  auto data = MakeDataSource(h.config.at("data"), torch::kCPU, 3);
  const SampleSpec spec = data->sample_spec();
  EXPECT_TRUE(spec.tokens());
  EXPECT_EQ(spec.input_dtype, torch::kLong);
  EXPECT_EQ(spec.input_shape, (std::vector<int64_t>{16}));
  EXPECT_EQ(spec.target_shape, (std::vector<int64_t>{16}));
  EXPECT_EQ(spec.num_classes, 256);

  // Through the runner's loader: int64 ids with the text's values.
  auto loader = engine::MakeTrialLoader(*data, torch::kCPU, h.active, h.ctx);
  const Batch b = loader.loader->next();
  EXPECT_EQ(b.input.scalar_type(), torch::kLong);
  EXPECT_EQ(b.target.scalar_type(), torch::kLong);
  EXPECT_TRUE(torch::equal(b.input[0], torch::tensor(std::vector<int64_t>(text.begin(), text.begin() + 16))));

  // Into the model's forward pass, through the runner's step.
  struct Recorder : models::Model {
    explicit Recorder(std::shared_ptr<models::Model> inner) : inner(register_module("inner", std::move(inner))) {}
    torch::Tensor forward(torch::Tensor x) override {
      seen = x;
      return inner->forward(x);
    }
    std::shared_ptr<models::Model> inner;
    torch::Tensor seen;
  };
  Recorder model(models::BuildModel(config["model"], spec));
  torch::optim::SGD sgd(model.parameters(), 0.1);
  Step step = engine::BaseStep(model, &sgd);
  Batch batch = b;
  const auto loss = step.forward(batch);
  EXPECT_EQ(model.seen.scalar_type(), torch::kLong);
  EXPECT_TRUE(torch::equal(model.seen, b.input));
  EXPECT_NEAR(loss.item<double>(), std::log(256.0), 0.2);  // an untrained model: about uniform over the bytes
}

TEST_F(Text, RunxDataPackLeavesTextToTheTrials) {
  const auto d = Config(Write("a.txt", "some text\n"), 2);
  EXPECT_EQ(ErrorOf([&] { Pack(d, 0, (dir_ / "out").string(), 0); }),
            "text data packs itself: the first trial that reads a text tokenizes it into the cache folder "
            "($RUNX_CACHE_DIR, else ~/.cache/runx) and later trials map that pack; there is nothing to pack");
}

/// A whole trial of a tiny gpt on a text: `extra` merged into its config.
store::TrialRecord TextTrial(const std::string& path, nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json config = runx::testing::TinyConfig(
      {{"model", {{"name", "gpt"}, {"n_layer", 1}, {"n_head", 2}, {"d_model", 32}}},
       {"data", {{"source", "text"}, {"path", path}, {"seq_len", 16}, {"batch_size", 8}}},
       {"train", {{"warmup_steps", 1}, {"steps", 12}, {"optimizer", {{"name", "adamw"}, {"lr", 0.01}}}}}});
  config["data"].erase("shape");
  config["data"].erase("num_classes");
  config.merge_patch(extra);
  return engine::RunTrial(config, runx::testing::TestPlugins());
}

TEST_F(Text, ATrialRecordsTokensPerSecondValidationLossAndPerplexity) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the cat sat on the mat. ";
  const auto r = TextTrial(Write("a.txt", text));
  ASSERT_EQ(Name(r.status), "ok") << r.error;
  const double samples = runx::testing::MetricOf(r, "samples_per_s"),
               tokens = runx::testing::MetricOf(r, "tokens_per_s");
  EXPECT_NEAR(tokens, samples * 16, 1e-9 * tokens);
  const double val_loss = runx::testing::MetricOf(r, "val_loss");
  EXPECT_LT(val_loss, std::log(256.0));  // a repetitive text, 13 steps: below uniform
  EXPECT_DOUBLE_EQ(runx::testing::MetricOf(r, "perplexity"), std::exp(val_loss));
  EXPECT_GT(runx::testing::MetricOf(r, "accuracy"), 0.0);
  EXPECT_EQ(r.environment.at("data.vocab_size"), "256");
  EXPECT_LT(r.steps.back().loss.value(), r.steps.front().loss.value());
}

TEST_F(Text, Bf16AutocastTrainsOnTokenIdsAndChannelsLastIsRefused) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the cat sat on the mat. ";
  const auto path = Write("a.txt", text);
  const auto bf16 = TextTrial(path, {{"precision", "bf16"}});
  ASSERT_EQ(Name(bf16.status), "ok") << bf16.error;
  EXPECT_EQ(bf16.environment.count("plugin.amp"), 1u);
  EXPECT_TRUE(std::isfinite(runx::testing::MetricOf(bf16, "val_loss")));
  EXPECT_LT(bf16.steps.back().loss.value(), bf16.steps.front().loss.value());
  const auto nhwc = TextTrial(path, {{"optimizations", {{"channels_last", nlohmann::json::object()}}}});
  EXPECT_EQ(Name(nhwc.status), "incompatible");
  EXPECT_EQ(nhwc.error,
            "channels_last: channels_last reorders the channels of 4-D image tensors; text data gives "
            "token ids [batch, seq_len] and gpt has no 4-D weights");
}

TEST(FortunesText, TheInstalledFilesAreReadOnceEach) {
  const std::string dir = "/usr/share/games/fortunes";
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " is missing: apt-get install fortunes";
  const auto files = spec::ListTextFiles(dir);
  int64_t texts = 0;  // the folder's files that are neither strfile indexes nor .u8 links
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && !e.is_symlink() && e.path().extension() != ".dat") ++texts;
  }
  EXPECT_EQ(static_cast<int64_t>(files.size()), texts);
  for (const auto& f : files) EXPECT_NE(fs::path(f.path).extension(), ".dat") << f.path;
}

}  // namespace
}  // namespace runx::data
