// A language model on real text through the real binary: gpt on the fortunes Debian installs
// (apt-get install fortunes), its loss going down, its metrics read back with `runx query`; and
// the located errors of text data that cannot be read.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/script.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "../remove_tree.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;

using runx::testing::Runx;

constexpr const char* kFortunes = "/usr/share/games/fortunes";

class TextRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_text_runs_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
    setenv("RUNX_CACHE_DIR", (dir_ / "cache").c_str(), 1);  // the runx children inherit it
  }
  void TearDown() override {
    unsetenv("RUNX_CACHE_DIR");
    runx::testing::RemoveTree(dir_.string());
  }
  std::string Write(const std::string& name, const std::string& text) const {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  /// `runx query` of `sql` as JSON rows.
  nlohmann::json Query(const std::string& sql) const {
    const auto r = Runx("query --db " + db_ + " --format json \"" + sql + "\"");
    EXPECT_EQ(r.status, 0) << r.out;
    return nlohmann::json::parse(r.out, nullptr, false);
  }
  fs::path dir_;
  std::string db_;
};

// experiments/gpt-text.yaml as a user runs it: the CPU size must learn the text, on 2 cores in
// about a minute, well beyond what byte frequencies alone give.
TEST_F(TextRuns, GptLearnsTheFortunes) {
  if (!fs::is_directory(kFortunes)) GTEST_SKIP() << kFortunes << " is missing: apt-get install fortunes";
  const auto run = Runx(RUNX_SOURCE_DIR "/experiments/gpt-text.yaml --db " + db_ + " -q");
  ASSERT_EQ(run.status, 0) << run.out;

  const auto trial = Query("SELECT status, error, final_loss, accuracy FROM trial_summary");
  ASSERT_EQ(trial.size(), 1u) << trial.dump();
  ASSERT_EQ(trial[0]["status"], "ok") << trial.dump();

  // The loss goes down: the mean of the last 8 steps at least 1.5 nats below the first 8 (an
  // untrained model starts at about ln 256 = 5.55).
  const auto steps = Query("SELECT loss FROM steps ORDER BY phase = 'measure', step");
  ASSERT_GT(steps.size(), 16u);
  double first = 0, last = 0;
  for (int i = 0; i < 8; ++i) {
    first += steps[i]["loss"].get<double>() / 8;
    last += steps[steps.size() - 1 - i]["loss"].get<double>() / 8;
  }
  std::printf("gpt-text: %zu steps, loss of the first 8 %.3f, of the last 8 %.3f\n", steps.size(), first, last);
  EXPECT_NEAR(steps[0]["loss"].get<double>(), std::log(256.0), 0.3);
  EXPECT_LT(last, first - 1.5);

  // tokens/s, validation loss and perplexity, like every other metric.
  const auto m = Query("SELECT name, value, unit FROM metrics WHERE step IS NULL ORDER BY name");
  std::map<std::string, double> metric;
  std::map<std::string, std::string> unit;
  for (const auto& row : m) {
    metric[row["name"]] = row["value"].is_null() ? std::nan("") : row["value"].get<double>();
    unit[row["name"]] = row["unit"].is_null() ? "" : row["unit"].get<std::string>();
  }
  for (const char* name : {"tokens_per_s", "samples_per_s", "val_loss", "perplexity", "accuracy", "measured_s"})
    ASSERT_TRUE(metric.count(name)) << name << " missing from " << m.dump();

  // What the trial read: the pack in the cache folder, the text's files by content, and the loss of
  // the model that knows only byte frequencies on the same held-out text.
  const auto env = Query("SELECT key, value FROM environment WHERE key LIKE 'data.%' ORDER BY key");
  std::map<std::string, std::string> facts;
  for (const auto& row : env) facts[row["key"]] = row["value"];
  const double unigram = std::stod(facts["data.unigram_loss"]);
  std::printf(
      "gpt-text: %.0f tokens/s, %.1f s measured, val_loss %.3f (byte frequencies alone: %.3f), perplexity "
      "%.2f, next-token accuracy %.3f\n",
      metric["tokens_per_s"], metric["measured_s"], metric["val_loss"], unigram, metric["perplexity"],
      metric["accuracy"]);
  EXPECT_EQ(unit["tokens_per_s"], "tokens/s");
  EXPECT_NEAR(metric["tokens_per_s"], metric["samples_per_s"] * 64, 1e-6 * metric["tokens_per_s"]);  // seq_len 64
  // English bytes: frequencies alone give about 3.3 nats; the model learned far more than that.
  EXPECT_GT(unigram, 3.0);
  EXPECT_LT(unigram, 3.6);
  EXPECT_LT(metric["val_loss"], unigram - 0.4);
  EXPECT_NEAR(metric["perplexity"], std::exp(metric["val_loss"]), 1e-9 * metric["perplexity"]);
  EXPECT_GT(metric["accuracy"], 0.2);
  EXPECT_EQ(facts["data.tokenizer"], "bytes");
  EXPECT_EQ(facts["data.vocab_size"], "256");
  EXPECT_EQ(fs::path(facts["data.pack"]).parent_path(), dir_ / "cache" / "text");
  const auto inputs = Query("SELECT inputs FROM trials");
  const auto files = nlohmann::json::parse(inputs[0]["inputs"].get<std::string>());
  EXPECT_GT(files["data.path"]["files"].get<int>(), 10) << files.dump();  // the text files, not the .dat indexes
}

// A language model the user brings, as TorchScript, on the same real text: the token ids reach it
// as int64 [batch, seq_len], its logits [batch, seq_len, 256] are scored at every position, and a
// model that can only learn which byte follows which (an embedding and a projection) already does
// clearly better than byte frequencies alone.
TEST_F(TextRuns, ATorchScriptLanguageModelLearnsTheFortunes) {
  if (!fs::is_directory(kFortunes)) GTEST_SKIP() << kFortunes << " is missing: apt-get install fortunes";
  const std::string model = (dir_ / "bigram.pt").string();
  {
    torch::manual_seed(0);
    torch::jit::Module m("Bigram");
    m.register_attribute("training", c10::BoolType::get(), true);
    m.register_parameter("emb", torch::randn({256, 64}) * 0.1, false);
    m.register_parameter("out", torch::randn({64, 256}) * 0.1, false);
    m.register_parameter("bias", torch::zeros({256}), false);
    m.define("def forward(self, x):\n  return torch.matmul(torch.embedding(self.emb, x), self.out) + self.bias\n");
    for (auto p : m.named_parameters()) p.value.set_requires_grad(true);  // as nn.Parameter saves them
    m.save(model);
  }
  const auto yaml =
      Write("lm.yaml", std::string("name: ts-lm\ndevice: cpu\nseed: 1\nmodel: {name: torchscript, path: ") + model +
                           "}\ndata: {source: text, path: " + kFortunes +
                           ", seq_len: 64, val_fraction: 0.05, batch_size: 32}\n"
                           "train: {optimizer: {name: adamw, lr: 0.01}, warmup_steps: 5, steps: 120, eval: true}\n");
  const auto run = Runx(yaml + " --db " + db_ + " -q");
  ASSERT_EQ(run.status, 0) << run.out;
  const auto trial = Query("SELECT status, error FROM trial_summary");
  ASSERT_EQ(trial.size(), 1u);
  ASSERT_EQ(trial[0]["status"], "ok") << trial.dump();
  const auto m = Query(
      "SELECT name, value FROM metrics WHERE step IS NULL AND name IN ('val_loss', 'perplexity', 'tokens_per_s')");
  std::map<std::string, double> metric;
  for (const auto& row : m) metric[row["name"]] = row["value"].get<double>();
  const auto env = Query("SELECT value FROM environment WHERE key = 'data.unigram_loss'");
  ASSERT_EQ(env.size(), 1u);
  const double unigram = std::stod(env[0]["value"].get<std::string>());
  std::printf(
      "torchscript bigram on the fortunes: val_loss %.3f (byte frequencies alone: %.3f), perplexity %.2f, "
      "%.0f tokens/s\n",
      metric["val_loss"], unigram, metric["perplexity"], metric["tokens_per_s"]);
  EXPECT_LT(metric["val_loss"], unigram - 0.3);
  EXPECT_NEAR(metric["perplexity"], std::exp(metric["val_loss"]), 1e-9 * metric["perplexity"]);
  EXPECT_GT(metric["tokens_per_s"], 0);
}

TEST_F(TextRuns, TextThatCannotBeReadIsALocatedError) {
  const auto missing = (dir_ / "missing.txt").string();
  const auto yaml = Write("bad.yaml",
                          "name: bad\n"
                          "model: {name: gpt}\n"
                          "data:\n"
                          "  source: text\n"
                          "  path: " +
                              missing +
                              "\n"
                              "  seq_len: 64\n"
                              "  batch_size: 8\n");
  auto r = Runx("validate " + yaml);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(yaml + ":5:9: error: cannot read '" + missing + "': No such file or directory\n"),
            std::string::npos)
      << r.out;
  Write("short.txt", "too short for 64 tokens\n");
  r = Runx(yaml + " --set data.path=" + (dir_ / "short.txt").string() + " --db " + db_);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(yaml + ":6:12: error: 'data.seq_len' 64 does not fit the training split of"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(db_));  // nothing ran
}

TEST_F(TextRuns, TheGpuExperimentFileIsValid) {
  if (!fs::is_directory(kFortunes)) GTEST_SKIP() << kFortunes << " is missing: apt-get install fortunes";
  // The GPU experiment and the technique check of docs/benchmarks.md (their trials need CUDA).
  for (const char* file :
       {RUNX_SOURCE_DIR "/experiments/gpt-text-gpu.yaml", RUNX_SOURCE_DIR "/bench/experiments/gpt-techniques.yaml"}) {
    const auto r = Runx(std::string("validate ") + file);
    EXPECT_EQ(r.status, 0) << file << ": " << r.out;
  }
}

}  // namespace
