// runx's verdicts on known answers, with the real runx binary on a machine the test makes busy
// itself (a process spinning on one of the CPUs for the whole test; ctest runs these tests alone,
// so that the load is the test's own and steady):
//   - A/A: the same experiment run again and again (--force) at the repeats runx recommends, each
//     run compared with the one before as `runx compare previous latest` does: faster or slower is
//     a false verdict, and may be said at most 5% of the time (here: at most 1 in 11);
//   - known effect: the same runs against runs whose every step sleeps 3 ms more (test_sleep): a
//     real slowdown, found at least 9 times in 10.
// bench/studies/verdicts_campaign.py runs the same at a larger scale, with and without the load, and
// docs/benchmarks.md has its figures.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../remove_tree.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;
using runx::testing::Runx;

// A tiny MLP whose step sleeps 2 ms (test_sleep) beside its compute, one intra-op thread, three
// repeats (kRecommendedRepeats): a run takes a few seconds, mostly starting processes.
constexpr const char* kExperiment =
    "name: verdicts\n"
    "device: cpu\n"
    "threads: 1\n"
    "model: {name: mlp, hidden: [64]}\n"
    "data: {source: synthetic, shape: [64], num_classes: 4, batch_size: 32}\n"
    "train: {warmup_steps: 3, steps: 30, eval: false}\n"
    "optimizations: {test_sleep: {ms: 2}}\n"
    "repeats: 3\n";

class Verdicts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_verdicts_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
    file_ = (dir_ / "verdicts.yaml").string();
    std::ofstream(file_) << kExperiment;
    setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
    // The load: a process that spins on one CPU until the test ends (or its parent dies).
    spinner_ = fork();
    if (spinner_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (volatile uint64_t i = 0;; ++i) {
      }
    }
  }
  void TearDown() override {
    if (spinner_ > 0) {
      kill(spinner_, SIGKILL);
      runx::testing::Wait(spinner_);
    }
    unsetenv("RUNX_PLUGIN_PATH");
    runx::testing::RemoveTree(dir_.string());
  }
  // Runs the experiment `times` times, each measuring anew; `args` are more options.
  void RunTimes(int times, const std::string& args = "") {
    for (int i = 0; i < times; ++i) {
      const auto r = Runx(file_ + " --db " + db_ + " -q --force" + args);
      ASSERT_EQ(r.status, 0) << r.out;
    }
  }
  // `runx compare A B --format json`.
  nlohmann::json Compare(const std::string& a, const std::string& b) {
    const auto r = Runx("compare " + a + " " + b + " --db " + db_ + " --format json");
    EXPECT_EQ(r.status, 0) << r.out;
    return nlohmann::json::parse(r.out);
  }
  // The variant's label (one variant per run).
  std::string Label() {
    const auto r = Runx("query --db " + db_ + " --format csv \"SELECT DISTINCT label FROM trials\"");
    return r.out.substr(r.out.find("\r\n") + 2, r.out.rfind("\r\n") - r.out.find("\r\n") - 2);
  }
  fs::path dir_;
  std::string db_, file_;
  pid_t spinner_ = -1;
};

TEST_F(Verdicts, IdenticalRunsOnABusyMachineGiveNoFalseVerdict) {
  RunTimes(12);
  int false_verdicts = 0, with_interval = 0;
  std::string seen;
  for (int run = 2; run <= 12; ++run) {
    const auto c = Compare(std::to_string(run - 1), std::to_string(run));
    ASSERT_EQ(c["variants"].size(), 1u) << c.dump();
    const auto& v = c["variants"][0];
    const std::string verdict = v["verdict"];
    if (verdict == "faster" || verdict == "slower") ++false_verdicts;
    if (!v["ratio_ci_low"].is_null()) ++with_interval;
    seen += std::to_string(run - 1) + " vs " + std::to_string(run) + ": " + verdict + " " + v["change_pct"].dump() +
            "% " + v["why"].get<std::string>() + "\n";
  }
  std::cout << seen;
  // One CPU spinning beside every trial: each side was measured on a busy machine.
  const auto busy =
      Runx("query --db " + db_ + " --format csv \"SELECT min(value) FROM metrics WHERE name = 'noise.other_cpus'\"");
  EXPECT_GT(std::stod(busy.out.substr(busy.out.find("\r\n") + 2)), 0.5) << busy.out;
  EXPECT_LE(false_verdicts, 1) << seen;
  // The comparisons were judged, not all left without an interval (that would pass any A/A test).
  EXPECT_GE(with_interval, 8) << seen;
}

TEST_F(Verdicts, AKnownSlowdownIsFoundNineTimesInTen) {
  RunTimes(10);                                          // runs 1-10: 2 ms of sleep a step
  RunTimes(10, " --set optimizations.test_sleep.ms=5");  // runs 11-20: 5 ms
  const std::string label = Label();
  int found = 0;
  std::string seen;
  for (int i = 1; i <= 10; ++i) {
    const auto c = Compare(std::to_string(i) + ":" + label, std::to_string(10 + i) + ":" + label);
    ASSERT_EQ(c["variants"].size(), 1u) << c.dump();
    const auto& v = c["variants"][0];
    if (v["verdict"] == "slower") ++found;
    EXPECT_NE(v["verdict"], "faster") << c.dump();
    seen += std::to_string(i) + " vs " + std::to_string(10 + i) + ": " + v["verdict"].get<std::string>() + " " +
            v["change_pct"].dump() + "% " + v["why"].get<std::string>() + "\n";
  }
  std::cout << seen;
  EXPECT_GE(found, 9) << seen;
}

}  // namespace
