// runx verify through the real binary, with the real plugins and a test plugin that gets the step
// wrong on purpose (tests/plugins/test_wrong_step.cc): each run is a trial in a child process,
// its weights exported by the export plugin and compared.
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "../remove_tree.h"
#include "run_util.h"

namespace {

namespace fs = std::filesystem;
using runx::testing::Runx;

class Verify : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
    dir_ = fs::temp_directory_path() / ("runx-verify-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    unsetenv("RUNX_PLUGIN_PATH");
    runx::testing::RemoveTree(dir_.string());
  }
  std::string Write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  // A small CNN on synthetic images (a 4-D input, so the fp32 floor is the other memory format).
  std::string Experiment(const std::string& axes) {
    return Write("verify.yaml",
                 "name: verify\n"
                 "device: cpu\n"
                 "threads: 1\n"
                 "seed: 3\n"
                 "model: {name: cnn, channels: [4, 8]}\n"
                 "data: {source: synthetic, shape: [1, 12, 12], num_classes: 4, batch_size: 8}\n"
                 "train: {optimizer: {name: sgd, lr: 0.05, momentum: 0.9}, warmup_steps: 2, steps: 20}\n"
                 "results: " +
                     (dir_ / "runx.db").string() +
                     "\n"
                     "sweep: {mode: ablation, axes: {optimizations: [" +
                     axes + "]}}\n");
  }
  // The block runx verify printed for `label`.
  static std::string Block(const std::string& out, const std::string& label) {
    const auto start = out.find("verify: " + label + ":");
    if (start == std::string::npos) return "";
    const auto end = out.find("\nverify: ", start + 1);
    return out.substr(start, end == std::string::npos ? std::string::npos : end + 1 - start);
  }
  fs::path dir_;
};

TEST_F(Verify, RejectsAWrongStepAndPassesAnotherMemoryFormat) {
  const auto r = Runx("verify " + Experiment("channels_last, test_wrong_step") + " --steps 3");
  EXPECT_EQ(r.status, 1) << r.out;
  const std::string cl = Block(r.out, "channels_last");
  ASSERT_FALSE(cl.empty()) << r.out;
  EXPECT_NE(cl.find("\n  ok\n"), std::string::npos) << cl;
  // The initial weights, the fp32 reference and the candidate; channels_last's floor (the fp32
  // step in the other memory format) would be the candidate itself, so it does not run.
  for (const char* role : {"initial", "reference", "candidate"})
    EXPECT_NE(cl.find(std::string("  ") + role), std::string::npos) << role << "\n" << cl;
  EXPECT_NE(cl.find("not run: it is the candidate itself"), std::string::npos) << cl;

  const std::string wrong = Block(r.out, "test_wrong_step");
  ASSERT_FALSE(wrong.empty()) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      wrong, m,
      std::regex(
          R"(its weights differ from the reference's by ([0-9.e+-]+) of the update, over the bound ([0-9.e+-]+))")))
      << wrong;
  EXPECT_NE(wrong.find("\n  FAILED: "), std::string::npos) << wrong;
  EXPECT_NE(
      wrong.find("floor      without test_wrong_step, fp32 (TF32 off), channels_last (the other memory format): ok"),
      std::string::npos)
      << wrong;
  // Every gradient 10% too large: about a tenth of the update (momentum carries it along).
  EXPECT_GT(std::stod(m[1]), 0.05) << wrong;
  EXPECT_LT(std::stod(m[1]), 0.2) << wrong;
  EXPECT_DOUBLE_EQ(std::stod(m[2]), 1e-3) << wrong;  // fp32's tolerance: the floor is far below it
  EXPECT_NE(r.out.find("verify: 1 of 3 variants train like the step without their techniques"), std::string::npos)
      << r.out;
  // Nothing is left behind, and the experiment's own store is not touched.
  EXPECT_FALSE(fs::exists(dir_ / "runx.db"));
}

TEST_F(Verify, AScaleOfOneIsTheSameStep) {
  const auto r =
      Runx("verify " + Experiment("test_wrong_step") + " --steps 2 --set optimizations.test_wrong_step.scale=1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(Block(r.out, "test_wrong_step").find("\n  ok\n"), std::string::npos) << r.out;
}

TEST_F(Verify, OneVariantHasNothingToVerify) {
  const auto path = Write("single.yaml",
                          "name: single\ndevice: cpu\nmodel: {name: mlp, hidden: [8]}\n"
                          "data: {source: synthetic, shape: [8], num_classes: 2, batch_size: 4}\n");
  const auto r = Runx("verify " + path);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("has one variant: nothing to verify"), std::string::npos) << r.out;
}

}  // namespace
