// The runx binary, started the way users start it, on real experiment files and a real store.
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <runx/compat.h>
#include <nlohmann/json.hpp>

#include "../remove_tree.h"
#include "run_util.h"
#include "runx/plugin.h"

namespace {
namespace fs = std::filesystem;

using runx::testing::Runx;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
  }
  std::string Write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string Tiny(const std::string& extra = "") {
    return Write("tiny.yaml",
                 "name: tiny\n"
                 "device: cpu\n"
                 "model: {name: mlp, hidden: [64]}\n"
                 "data: {source: fashion-mnist, batch_size: 100, train_limit: 3000}\n"
                 "train:\n"
                 "  optimizer: {name: adamw, lr: 0.002}\n"
                 "  warmup_steps: 2\n"
                 "  epochs: 1\n" +
                     extra);
  }
  fs::path dir_;
  std::string db_;
};

TEST_F(Cli, RunRecordsTrialAndQueryShowsIt) {
  auto r = Runx(Tiny() + " --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("baseline"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("results: " + db_), std::string::npos) << r.out;

  auto q = Runx("query --db " + db_ +
                " --format json \"SELECT label, status, device, samples_per_s, accuracy, "
                "step_ms_median FROM trial_summary\"");
  ASSERT_EQ(q.status, 0) << q.out;
  auto rows = nlohmann::json::parse(q.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["label"], "baseline");
  EXPECT_EQ(rows[0]["status"], "ok");
  EXPECT_EQ(rows[0]["device"], "cpu");
  EXPECT_GT(rows[0]["samples_per_s"].get<double>(), 0);
  EXPECT_GT(rows[0]["accuracy"].get<double>(), 0.6);  // 30 steps of a small MLP on real data

  SQLite::Database db(db_);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM steps WHERE phase = 'measure'").getInt(), 30);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM steps WHERE phase = 'warmup'").getInt(), 2);
  EXPECT_EQ(db.execAndGet("SELECT value FROM environment WHERE key = 'libtorch_version' LIMIT 1").getString().empty(),
            false);
  EXPECT_EQ(db.execAndGet("PRAGMA integrity_check").getString(), "ok");

  auto csv = Runx("query --db " + db_ + " --format csv \"SELECT label, status FROM trial_summary\"");
  EXPECT_EQ(csv.out, "label,status\r\nbaseline,ok\r\n");
}

// Every trial either has its energy figures or says why it has none, in the store that users query.
TEST_F(Cli, EveryTrialIsMeteredOrSaysWhyNot) {
  auto r = Runx(Tiny() + " --db " + db_ + " -q");
  ASSERT_EQ(r.status, 0) << r.out;
  SQLite::Database db(db_);
  const int trial = db.execAndGet("SELECT max(id) FROM trials").getInt();
  const auto env = [&](const std::string& key) {
    SQLite::Statement q(db, "SELECT value FROM environment WHERE trial_id = ? AND key = ?");
    q.bind(1, trial);
    q.bind(2, key);
    return q.executeStep() ? q.getColumn(0).getString() : std::string();
  };
  const auto metric = [&](const std::string& name) {
    SQLite::Statement q(db, "SELECT value FROM metrics WHERE trial_id = ? AND name = ? AND step IS NULL");
    q.bind(1, trial);
    q.bind(2, name);
    return q.executeStep() ? q.getColumn(0).getDouble() : -1.0;
  };
  const std::string absent = env("energy.absent");
  const double per_sample = metric("joules_per_sample");
  EXPECT_NE(absent.empty(), per_sample < 0) << "absent: '" << absent << "', J/sample " << per_sample;
  if (per_sample >= 0) {  // 30 measured steps of 100 samples
    EXPECT_NEAR(per_sample * 3000, metric("energy_j"), 1e-9 * metric("energy_j"));
    EXPECT_GT(metric("power_w"), 0);
    EXPECT_EQ(env("energy.source").rfind("rapl: package-", 0), 0u) << env("energy.source");
  }
  if (!fs::exists("/sys/class/powercap")) {  // this machine: a virtual machine without RAPL
    EXPECT_EQ(absent,
              "no RAPL counters: /sys/class/powercap has no package zone (a CPU without RAPL, or a "
              "virtual machine that does not pass it through)");
  }
  // A value the switch does not know is refused before anything runs, not taken for "on".
  r = runx::testing::Shell("RUNX_ENERGY=false " + std::string(RUNX_BIN) + " " + Tiny() + " --db " + db_ +
                           " -q --force");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("runx: error: RUNX_ENERGY='false': expected 'off' (no energy meter) or 'on' (the default)"),
            std::string::npos)
      << r.out;
  // Switched off (how the meter's own cost is measured): no meter, and the reason says so.
  r = runx::testing::Shell("RUNX_ENERGY=off " + std::string(RUNX_BIN) + " " + Tiny() + " --db " + db_ + " -q --force");
  ASSERT_EQ(r.status, 0) << r.out;
  const int off = db.execAndGet("SELECT max(id) FROM trials").getInt();
  ASSERT_GT(off, trial);
  SQLite::Statement q(db, "SELECT value FROM environment WHERE trial_id = ? AND key = 'energy.absent'");
  q.bind(1, off);
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getString(), "switched off (RUNX_ENERGY=off)");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM metrics WHERE trial_id = " + std::to_string(off) +
                          " AND name IN ('energy_j', 'joules_per_sample', 'power_w')")
                .getInt(),
            0);
}

// `threads` is the CPU's intra-op thread count of a trial: each variant of a sweep over it
// computes with its own, and the environment records what LibTorch then used.
TEST_F(Cli, ThreadsSetsEachTrialsIntraOpThreads) {
  const auto file = Write("threads.yaml",
                          "name: threads\n"
                          "device: cpu\n"
                          "model: {name: mlp, hidden: [32]}\n"
                          "data: {source: synthetic, shape: [16], num_classes: 4, batch_size: 8}\n"
                          "train: {warmup_steps: 1, steps: 3, eval: false}\n"
                          "sweep: {mode: grid, axes: {threads: [1, 3]}}\n");
  auto r = Runx(file + " --db " + db_ + " -q");
  ASSERT_EQ(r.status, 0) << r.out;
  SQLite::Database db(db_);
  SQLite::Statement q(db,
                      "SELECT t.label, e.value FROM trials t JOIN environment e ON e.trial_id = t.id "
                      "WHERE e.key = 'intra_op_threads' ORDER BY t.id");
  std::vector<std::pair<std::string, std::string>> got;
  while (q.executeStep()) got.emplace_back(q.getColumn(0).getString(), q.getColumn(1).getString());
  // a grid's first variant is its baseline
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{{"baseline", "1"}, {"threads=3", "3"}}));

  // determinism's own threads win, and the environment says so
  auto det = Runx(file + " --db " + db_ +
                  " -q --set 'sweep.axes={threads: [3]}' --set 'optimizations={determinism: {threads: 2}}'");
  ASSERT_EQ(det.status, 0) << det.out;
  EXPECT_EQ(db.execAndGet("SELECT value FROM environment WHERE key = 'intra_op_threads' AND trial_id = "
                          "(SELECT max(id) FROM trials)")
                .getString(),
            "2");

  auto bad = Runx(file + " --db " + db_ + " --set threads=0");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("--set threads=0: error: 'threads' must be >= 1, got 0"), std::string::npos) << bad.out;
}

TEST_F(Cli, QueryIsReadOnly) {
  ASSERT_EQ(Runx(Tiny() + " --db " + db_ + " --set train.epochs=0.04 -q").status, 0);
  auto r = Runx("query --db " + db_ + " \"DELETE FROM trials\"");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("error: runx query is read-only: the statement would modify the store"), std::string::npos)
      << r.out;
  SQLite::Database db(db_);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM trials").getInt(), 1);
}

TEST_F(Cli, SetOverridesAreTypedAndChecked) {
  auto ok = Runx(Tiny() + " --db " + db_ + " --set train.epochs=0.05 --set data.batch_size=50 -q");
  ASSERT_EQ(ok.status, 0) << ok.out;
  SQLite::Database db(db_);
  EXPECT_EQ(static_cast<double>(db.execAndGet("SELECT value FROM metrics WHERE name = 'batch_size'").getDouble()), 50);
  auto bad = Runx(Tiny() + " --db " + db_ + " --set data.batch_size=-3");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("--set data.batch_size=-3: error: 'data.batch_size' must be >= 1, got -3"), std::string::npos)
      << bad.out;
}

TEST_F(Cli, FailingTechniqueIsARecordedTrialNotACrash) {
  setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
  auto r = Runx(Tiny("optimizations:\n  test_throws: {message: exploded}\n") + " --db " + db_);
  unsetenv("RUNX_PLUGIN_PATH");
  EXPECT_EQ(r.status, 0) << r.out;
  auto q = Runx("query --db " + db_ + " --format json \"SELECT status, error FROM trial_summary\"");
  auto rows = nlohmann::json::parse(q.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["status"], "failed");
  EXPECT_EQ(rows[0]["error"], "technique 'test_throws' failed in on_setup: exploded");
}

TEST_F(Cli, ValidateAcceptsShippedExperiments) {
  auto r =
      Runx("validate " RUNX_SOURCE_DIR "/experiments/quickstart.yaml " RUNX_SOURCE_DIR "/experiments/resnet50.yaml");
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST_F(Cli, ValidateReportsEveryBrokenFileQuickly) {
  const auto bad1 = Write("unknown_key.yaml", "name: x\nmodel: {name: mlp}\ndata: {source: synthetic, batchsize: 4}\n");
  const auto bad2 = Write("empty.yaml", "");
  const auto bomb = Write("bomb.yaml",
                          "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                          "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                          "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                          "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n");
  std::string deep(100000, '[');
  const auto nest = Write("deep.yaml", "name: " + deep + "\n");
  auto r = Runx("validate " + bad1 + " " + bad2 + " " + bomb + " " + nest);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_NE(r.out.find(bad1 + ":3:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean 'batch_size'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(bad2 + ": error: empty experiment file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(bomb + ":"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(nest + ":"), std::string::npos) << r.out;
}

TEST_F(Cli, DoctorAndPlugins) {
  auto d = Runx("doctor");
  EXPECT_EQ(d.status, 0) << d.out;
  for (const char* k : {"LibTorch", "MPS", "CUDA", "cuDNN", "threads", "BLAS", "device: auto", "autocast"})
    EXPECT_NE(d.out.find(k), std::string::npos) << k << "\n" << d.out;
  EXPECT_NE(d.out.find(runx::compat::kHasAotInductor ? "\nAOTInductor           built: packages load"
                                                     : "\nAOTInductor           not built (LibTorch 2.6 or later"),
            std::string::npos)
      << d.out;
  auto p = Runx("plugins");
  EXPECT_EQ(p.status, 0) << p.out;
  // Every technique of issue 4, with its version and the plugin API it was built for.
  for (const char* name : {"amp", "channels_last", "auto_batch", "prefetch", "cuda_graphs", "memory", "determinism",
                           "anomaly", "fused_optimizer", "export"}) {
    const auto at = p.out.find(std::string("\n") + name + " ");
    ASSERT_NE(at, std::string::npos) << name << "\n" << p.out;
    const auto line = p.out.substr(at + 1, p.out.find('\n', at + 1) - at - 1);
    // 1.1: task infer (amp, anomaly, fused_optimizer, cuda_graphs), headroom 0.9 (auto_batch),
    // frozen on the trial's device (export).
    const std::string_view n = name;
    const bool v11 = n == "amp" || n == "anomaly" || n == "fused_optimizer" || n == "cuda_graphs" ||
                     n == "auto_batch" || n == "export";
    EXPECT_NE(line.find(v11 ? " 1.1.0 " : " 1.0.0 "), std::string::npos) << line;
    EXPECT_NE(line.find("v" + std::to_string(runx::kPluginApiVersion)), std::string::npos) << line;
  }
}

TEST_F(Cli, UnknownCommandLineOptionIsAUsageError) {
  EXPECT_EQ(Runx("query").status, 2);
  EXPECT_EQ(Runx("run").status, 2);
}

// The quickstart as users run it (real Fashion-MNIST, full epoch on the CPU): the accuracy claim.
TEST_F(Cli, QuickstartReachesEightyPercent) {
  auto r = Runx(std::string(RUNX_SOURCE_DIR) + "/experiments/quickstart.yaml --db " + db_ + " -q");
  ASSERT_EQ(r.status, 0) << r.out;
  SQLite::Database db(db_);
  const double acc = db.execAndGet("SELECT accuracy FROM trial_summary").getDouble();
  std::printf("quickstart accuracy %.4f in %.1f s\n", acc, r.seconds);
  EXPECT_GE(acc, 0.80);
}

}  // namespace
