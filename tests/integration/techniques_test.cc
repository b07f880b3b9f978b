// The technique plugins determinism, anomaly, fused_optimizer and profile in the real runx binary, read
// back from the real store: each must change what the trial records.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../remove_tree.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;

using runx::testing::Runx;

class Techniques : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_techniques_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
  }
  static constexpr const char* kMlp = "{name: mlp, hidden: [32]}";
  static constexpr const char* kDropoutMlp = "{name: mlp, hidden: [32], dropout: 0.5}";
  static constexpr const char* kSgd = "{name: sgd, lr: 0.1}";
  /// Runs a tiny synthetic MLP experiment with `optimizations` (YAML lines under 'optimizations:'),
  /// and `extra` top-level lines.
  void Run(const std::string& file, const std::string& optimizations, const std::string& model = kMlp,
           const std::string& optimizer = kSgd, const std::string& extra = "") {
    const auto path = (dir_ / file).string();
    std::ofstream(path) << "name: " << fs::path(file).stem().string() << "\n"
                        << extra << "device: cpu\n"
                        << "model: " << model << "\n"
                        << "data: {source: synthetic, shape: [16], num_classes: 4, batch_size: 8}\n"
                        << "train:\n"
                        << "  optimizer: " << optimizer << "\n"
                        << "  warmup_steps: 2\n"
                        << "  steps: 10\n"
                        << "  eval: false\n"
                        << "optimizations:\n"
                        << optimizations;
    auto r = Runx(path + " --db " + db_ + " -q");
    ASSERT_EQ(r.status, 0) << r.out;
  }
  /// The per-step losses of trial `id`, warm-up first.
  std::vector<double> Losses(int id) {
    SQLite::Database db(db_);
    SQLite::Statement q(db, "SELECT loss FROM steps WHERE trial_id = ? ORDER BY phase = 'measure', step");
    q.bind(1, id);
    std::vector<double> out;
    while (q.executeStep()) out.push_back(q.getColumn(0).isNull() ? std::nan("") : q.getColumn(0).getDouble());
    return out;
  }
  std::string Env(int id, const std::string& key) {
    SQLite::Database db(db_);
    SQLite::Statement q(db, "SELECT value FROM environment WHERE trial_id = ? AND key = ?");
    q.bind(1, id);
    q.bind(2, key);
    return q.executeStep() ? q.getColumn(0).getString() : "";
  }
  std::string Trial(int id, const std::string& column) {
    SQLite::Database db(db_);
    SQLite::Statement q(db, "SELECT " + column + " FROM trials WHERE id = ?");
    q.bind(1, id);
    return q.executeStep() ? q.getColumn(0).getString() : "";
  }
  double Metric(int id, const std::string& name) {
    SQLite::Database db(db_);
    SQLite::Statement q(db, "SELECT value FROM metrics WHERE trial_id = ? AND name = ? AND step IS NULL");
    q.bind(1, id);
    q.bind(2, name);
    return q.executeStep() ? q.getColumn(0).getDouble() : std::nan("");
  }
  fs::path dir_;
  std::string db_;
};

// Two trials (two processes) of one experiment under determinism: the same losses, bit for bit.
TEST_F(Techniques, DeterminismRepeatsAreBitIdentical) {
  Run("seven.yaml", "  determinism: {seed: 7, threads: 1}\n", kDropoutMlp, kSgd, "repeats: 2\n");
  const auto a = Losses(1), b = Losses(2);
  ASSERT_EQ(a.size(), 12u);
  ASSERT_EQ(b.size(), 12u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "step " << i;
  EXPECT_EQ(Env(1, "determinism.seed"), "7");
  EXPECT_EQ(Env(1, "determinism.deterministic_algorithms"), "true");
  EXPECT_EQ(Env(1, "determinism.cudnn_benchmark"), "false");
  EXPECT_EQ(Env(1, "determinism.threads"), "1");
  EXPECT_EQ(Env(1, "plugin.determinism"), "1.0.0");
}

// Dropout draws from the generator during training. The runner seeds everything with the
// experiment's seed (0 here), so only the plugin's seed can make the two trials differ.
TEST_F(Techniques, DeterminismSeedIsApplied) {
  Run("eight.yaml", "  determinism: {seed: 8}\n", kDropoutMlp, kSgd,
      "sweep: {mode: ablation, axes: {optimizations: [determinism]}}\n");
  SQLite::Database db(db_);
  const int off = db.execAndGet("SELECT id FROM trials WHERE label = 'baseline'").getInt();
  const int on = db.execAndGet("SELECT id FROM trials WHERE label = 'determinism'").getInt();
  const auto baseline = Losses(off), seeded = Losses(on);
  ASSERT_EQ(baseline.size(), 12u);
  ASSERT_EQ(seeded.size(), 12u);
  EXPECT_NE(baseline, seeded);
  EXPECT_EQ(Env(on, "determinism.seed"), "8");
}

// test_crash fills the weights with NaN at the end of step 3: step 4's loss is NaN. Without
// anomaly the runner would train on to step 11 and call it nan afterwards.
TEST_F(Techniques, AnomalyAbortEndsTheTrialAtTheFirstNaN) {
  setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
  Run("nan.yaml", "  test_crash: {mode: nan, at_step: 3}\n  anomaly: {on_anomaly: abort}\n");
  unsetenv("RUNX_PLUGIN_PATH");
  EXPECT_EQ(Trial(1, "status"), "nan");
  EXPECT_EQ(Trial(1, "error"), "anomaly: loss: NaN ratio 1, Inf ratio 0 at step 4");
  EXPECT_EQ(Losses(1).size(), 5u);  // steps 0..4 of the 12 configured
  EXPECT_EQ(Metric(1, "anomaly.anomalous_steps"), 1);
  EXPECT_EQ(Metric(1, "anomaly.checked_steps"), 5);
}

TEST_F(Techniques, AnomalyWarnRecordsPerStepRatios) {
  Run("warn.yaml", "  anomaly: {every: 2}\n");
  EXPECT_EQ(Trial(1, "status"), "ok");
  SQLite::Database db(db_);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM metrics WHERE name = 'anomaly.grad_nan_ratio' AND value = 0").getInt(),
            6);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(step) FROM metrics WHERE name = 'anomaly.loss_mean'").getString(),
            "0,2,4,6,8,10");
}

// The plugin's AdamW must train like torch::optim::AdamW: the same losses as a run without it
// (within float rounding: the fused kernel orders its arithmetic differently).
TEST_F(Techniques, FusedOptimizerTrainsLikeTheBuiltInOptimizer) {
  Run("fused.yaml", "  fused_optimizer: {}\n", kMlp, "{name: adamw, lr: 0.01, weight_decay: 0.01}",
      "sweep: {mode: ablation, axes: {optimizations: [fused_optimizer]}}\n");
  SQLite::Database db(db_);
  const int builtin = db.execAndGet("SELECT id FROM trials WHERE label = 'baseline'").getInt();
  const int on = db.execAndGet("SELECT id FROM trials WHERE label = 'fused_optimizer'").getInt();
  EXPECT_EQ(Trial(on, "status"), "ok");
  EXPECT_EQ(Env(on, "plugin.fused_optimizer"), "1.1.0");
  const std::string kernel = Env(on, "fused_optimizer.kernel");
  EXPECT_TRUE(kernel == "foreach" || kernel == "fused") << kernel;
  EXPECT_EQ(Env(on, "fused_optimizer.optimizer"), "adamw");
  EXPECT_EQ(Metric(on, "fused_optimizer.steps"), 12);  // every update was the plugin's
  const auto mine = Losses(on), reference = Losses(builtin);
  ASSERT_EQ(mine.size(), 12u);
  ASSERT_EQ(reference.size(), 12u);
  for (size_t i = 0; i < mine.size(); ++i) EXPECT_NEAR(mine[i], reference[i], 1e-5 * std::abs(reference[i])) << i;
  EXPECT_LT(mine.back(), mine.front());  // it trains
}

}  // namespace

namespace {

// profile wraps LibTorch's profiler around steps 1-2 (warm-up is 2 steps here, so the last two
// would be 0-1; `start` moves it) and records what ran: on the CPU the ops, each with its time.
// The MLP's linear layers must be among them, and the trace must be a Chrome trace of those steps.
TEST_F(Techniques, ProfileRecordsTheOpsOfTheProfiledSteps) {
  Run("profiled.yaml", "  profile: {steps: 2, start: 1, top: 50}\n");
  EXPECT_EQ(Trial(1, "status"), "ok");
  EXPECT_EQ(Metric(1, "profile.steps"), 2);
  EXPECT_GT(Metric(1, "profile.ops_per_step"), 10);  // forward, backward and update of a 2-layer MLP
  EXPECT_GT(Metric(1, "profile.wall_ms_per_step"), 0);
  EXPECT_EQ(Env(1, "profile.top_of"), "CPU ops (inclusive time: nested ops count in each)");
  const auto top = nlohmann::json::parse(Env(1, "profile.top"));
  ASSERT_FALSE(top.empty());
  bool linear = false;
  for (const auto& op : top) {
    linear = linear || op["name"] == "aten::addmm" || op["name"] == "aten::linear";
    EXPECT_GT(op["calls_per_step"].get<double>(), 0) << op.dump();
  }
  EXPECT_TRUE(linear) << top.dump();
  EXPECT_EQ(nlohmann::json::parse(Env(1, "technique.profile"))["start"], 1);
  const std::string trace = Env(1, "profile.trace");
  ASSERT_TRUE(fs::exists(trace)) << trace;
  std::ifstream in(trace);
  const auto chrome = nlohmann::json::parse(in);
  ASSERT_TRUE(chrome.contains("traceEvents"));
  EXPECT_GT(chrome["traceEvents"].size(), 10u);
}

// Without `start`, the profiled steps are the last warm-up steps: no measured step pays for it.
TEST_F(Techniques, ProfileDefaultsToTheLastWarmupSteps) {
  Run("profiled_default.yaml", "  profile: {steps: 2, trace: false}\n");
  EXPECT_EQ(nlohmann::json::parse(Env(1, "technique.profile"))["start"], 0);  // warm-up steps 0 and 1
  EXPECT_EQ(Env(1, "profile.trace"), "");
  EXPECT_EQ(Metric(1, "profile.steps"), 2);
}

}  // namespace
