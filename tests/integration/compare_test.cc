// runx compare, runx history and the end-of-run exports through the real runx binary and a real
// store: two runs of a tiny experiment get a verdict per variant, history lists them newest first,
// the regression gate fails on a store where B is clearly slower (built with the Store API, not
// left to timing noise), and --export-json has every variant.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../remove_tree.h"
#include "run_util.h"
#include "store/store.h"

namespace {
namespace fs = std::filesystem;
using runx::testing::Runx;

// Two variants (batch 4 and 8) of a tiny CNN on synthetic data: a run takes a second or two.
constexpr const char* kTiny =
    "name: tiny_compare\n"
    "device: cpu\n"
    "model: {name: cnn, channels: [4, 8]}\n"
    "data: {source: synthetic, shape: [3, 8, 8], num_classes: 5, batch_size: 8}\n"
    "train: {warmup_steps: 1, steps: 8, optimizer: {name: sgd, lr: 0.01}}\n"
    "repeats: 2\n"
    "sweep: {mode: grid, axes: {data.batch_size: [4, 8]}}\n";

class CompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // The pid keeps two checkouts running this test at once apart.
    dir_ = fs::temp_directory_path() /
           ("runx_compare_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
  }
  void TearDown() override { runx::testing::RemoveTree(dir_.string()); }
  std::string Write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
  std::string db_;
};

TEST_F(CompareCli, TwoRunsGetAVerdictPerVariantAndAHistory) {
  const std::string file = Write("tiny.yaml", kTiny);
  const std::string json_out = (dir_ / "report.json").string();
  const std::string md_out = (dir_ / "report.md").string();
  const std::string csv_out = (dir_ / "report.csv").string();
  const auto first = Runx(file + " --db " + db_ + " -q --export-json " + json_out + " --export-markdown " + md_out +
                          " --export-csv " + csv_out);
  ASSERT_EQ(first.status, 0) << first.out;
  // The exported table: every variant, in JSON, markdown and CSV.
  const auto report = nlohmann::json::parse(Read(json_out));
  EXPECT_EQ(report["run_id"], 1);
  EXPECT_EQ(report["experiment"], "tiny_compare");
  ASSERT_EQ(report["variants"].size(), 2u) << report.dump();
  std::vector<std::string> labels;
  for (const auto& v : report["variants"]) {
    labels.push_back(v["label"]);
    EXPECT_EQ(v["ok_trials"], 2) << v.dump();
    EXPECT_GT(v["samples_per_s"].get<double>(), 0) << v.dump();
  }
  const std::string md = Read(md_out);
  EXPECT_EQ(md.rfind("| variant | trials |", 0), 0u) << md;
  for (const auto& l : labels) EXPECT_NE(md.find("| " + l + " |"), std::string::npos) << md;
  EXPECT_EQ(Read(csv_out).rfind("label,is_baseline,", 0), 0u);

  const auto second = Runx(file + " --db " + db_ + " -q --force");
  ASSERT_EQ(second.status, 0) << second.out;

  const auto table = Runx("compare previous latest --db " + db_);
  ASSERT_EQ(table.status, 0) << table.out;
  EXPECT_NE(table.out.find("A: run 1 of tiny_compare"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("B: run 2 of tiny_compare"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("environment: same runx build and platform"), std::string::npos) << table.out;
  const auto json = Runx("compare previous latest --db " + db_ + " --format json");
  ASSERT_EQ(json.status, 0) << json.out;
  const auto c = nlohmann::json::parse(json.out);
  ASSERT_EQ(c["variants"].size(), 2u) << json.out;
  for (const auto& v : c["variants"]) {
    const std::string verdict = v["verdict"];
    EXPECT_TRUE(verdict == "faster" || verdict == "slower" || verdict == "no change" || verdict == "inconclusive")
        << verdict;
    EXPECT_NE(table.out.find(v["label_a"].get<std::string>()), std::string::npos) << table.out;
  }
  EXPECT_TRUE(c["only_in_a"].empty());
  // Two variants of one run.
  const auto within = Runx("compare latest:" + labels[0] + " latest:" + labels[1] + " --db " + db_ + " --format json");
  ASSERT_EQ(within.status, 0) << within.out;
  EXPECT_EQ(nlohmann::json::parse(within.out)["variants"].size(), 1u) << within.out;

  // History: both runs, newest first, by name or by file.
  const auto history = Runx("history tiny_compare --db " + db_);
  ASSERT_EQ(history.status, 0) << history.out;
  const size_t run2 = history.out.find("\n  2  ");
  const size_t run1 = history.out.find("\n  1  ");
  ASSERT_NE(run2, std::string::npos) << history.out;
  ASSERT_NE(run1, std::string::npos) << history.out;
  EXPECT_LT(run2, run1) << history.out;
  const auto by_file = Runx("history " + file + " --db " + db_ + " --format json");
  ASSERT_EQ(by_file.status, 0) << by_file.out;
  const auto rows = nlohmann::json::parse(by_file.out);
  ASSERT_EQ(rows.size(), 4u) << by_file.out;
  EXPECT_EQ(rows[0]["run_id"], 2);
  EXPECT_EQ(rows[0]["previous_run"], 1);
  EXPECT_EQ(rows[3]["change"], "new");
  const auto limited = Runx("history --db " + db_ + " --limit 1 --format csv");
  ASSERT_EQ(limited.status, 0) << limited.out;
  EXPECT_EQ(std::count(limited.out.begin(), limited.out.end(), '\n'), 3) << limited.out;  // header + 2 variants

  // What decides noise on this machine is recorded with the run.
  const auto env = Runx("query --db " + db_ +
                        " \"SELECT value FROM environment WHERE run_id = 1 AND trial_id IS "
                        "NULL AND key = 'noise.load_average'\"");
  EXPECT_NE(env.out.find('.'), std::string::npos) << env.out;
}

// A store where run 2's `base` is clearly slower than run 1's (12 ms steps instead of 10 ms) and
// `fast` did not change: written through the Store API.
void FillRegressionStore(const std::string& db) {
  using namespace runx::store;
  Store store = Store::Open(db);
  const int64_t exp = store.AddExperiment("gate", "gate.yaml", "name: gate\n", "sha-gate");
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> jitter(-0.01, 0.01);
  const auto run = [&](const std::string& sha, const std::string& started, double base_ms) {
    RunInfo info;
    info.experiment_id = exp;
    info.started_at = started;
    info.host = "box";
    info.git_sha = sha;
    info.git_dirty = false;
    info.build_type = "Release";
    info.runx_build = "build-" + sha;
    const int64_t id = store.BeginRun(info);
    int order = 0;
    for (const auto& [label, ms] : {std::pair<std::string, double>{"base", base_ms}, {"fast", 5.0}}) {
      for (int repeat = 0; repeat < 3; ++repeat) {
        TrialRecord t;
        t.run_id = id;
        t.config_hash = "config-" + label;
        t.env_hash = "env-" + sha;
        t.platform_hash = "platform";
        t.config_json = "{}";
        t.label = label;
        t.is_baseline = label == "base";
        t.repeat_index = repeat;
        t.order_index = order++;
        t.device = "cpu";
        t.status = runx::TrialStatus::kOk;
        t.started_at = t.finished_at = started;
        for (int s = 0; s < 30; ++s) t.steps.push_back({"measure", s, ms * (1 + jitter(rng)), 0, 16, std::nullopt});
        store.RecordTrial(t);
      }
    }
    store.EndRun(id, runx::RunStatus::kOk, started);
  };
  run("aaaa1111", "2026-12-01T10:00:00Z", 10.0);
  run("bbbb2222", "2026-12-02T10:00:00Z", 12.0);
}

TEST_F(CompareCli, TheRegressionGateFailsWhenBIsSlower) {
  FillRegressionStore(db_);
  const auto slower = Runx("compare 1 2 --db " + db_ + " --fail-on-regression");
  EXPECT_EQ(slower.status, 1) << slower.out;
  EXPECT_NE(slower.out.find("regression gate: failed: 1 slower beyond 2%: base"), std::string::npos) << slower.out;
  EXPECT_NE(slower.out.find("environment differs: runx build:"), std::string::npos) << slower.out;
  // Git revisions name the newest run of their build; the other way round it is faster.
  const auto faster = Runx("compare bbbb aaaa1 --db " + db_ + " --fail-on-regression");
  EXPECT_EQ(faster.status, 0) << faster.out;
  EXPECT_NE(faster.out.find("regression gate: passed"), std::string::npos) << faster.out;
  const auto json = nlohmann::json::parse(Runx("compare previous latest --db " + db_ + " --format json").out);
  EXPECT_EQ(json["variants"][0]["verdict"], "slower");
  EXPECT_EQ(json["variants"][1]["verdict"], "no change");
  EXPECT_EQ(json["variants"][1]["within_threshold"], 1);
  EXPECT_EQ(json["regressions"], nlohmann::json::array({"base"}));
  // A threshold above the effect (-16.7%) lets it pass; without the flag the exit status is 0.
  EXPECT_EQ(Runx("compare 1 2 --db " + db_ + " --fail-on-regression --threshold 20%").status, 0);
  EXPECT_EQ(Runx("compare 1 2 --db " + db_).status, 0);
  // Two variants of one run.
  const auto within = Runx("compare 1:base 1:fast --db " + db_);
  EXPECT_EQ(within.status, 0) << within.out;
  EXPECT_NE(within.out.find("base -> fast"), std::string::npos) << within.out;
  EXPECT_NE(within.out.find("faster"), std::string::npos) << within.out;
  // History marks the regression.
  const auto history = Runx("history gate --db " + db_);
  EXPECT_NE(history.out.find("▼ -16."), std::string::npos) << history.out;
}

// The user's code in the history: a run of an experiment file in a git repository records its
// commit (and whether it had uncommitted changes), `--tag` and `--note` are kept, and compare and
// history take the tag and the user's revision. A rerun that reuses everything is no history
// point; comparing a run with itself says so; the strict gate fails on an inconclusive variant.
TEST_F(CompareCli, TheUsersCommitTagsAndNotes) {
  const std::string repo = (dir_ / "repo").string();
  fs::create_directories(repo);
  const std::string file = repo + "/tiny.yaml";
  std::ofstream(file) << kTiny;
  const std::string git = "git -C " + repo + " -c user.name=t -c user.email=t@t ";
  ASSERT_EQ(std::system((git + "init -q && " + git + "add tiny.yaml && " + git + "commit -q -m one").c_str()), 0);
  const std::string sha = [&] {
    FILE* p = popen(("git -C " + repo + " rev-parse HEAD").c_str(), "r");
    char buf[64] = {};
    fgets(buf, sizeof buf, p);
    pclose(p);
    return std::string(buf, 40);
  }();
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q --tag before --note 'the old loader'").status, 0);
  // A second commit, then an edit left uncommitted: run 2 is at the second commit, dirty.
  std::ofstream(file, std::ios::app) << "# a committed edit\n";
  ASSERT_EQ(std::system((git + "commit -q -a -m two").c_str()), 0);
  std::ofstream(file, std::ios::app) << "# an edit: the repository is dirty now\n";
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q --force --tag after").status, 0);
  const auto runs = Runx("query --db " + db_ +
                         " --format json \"SELECT id, tag, note, user_git_sha, user_git_dirty FROM runs ORDER BY id\"");
  const auto rows = nlohmann::json::parse(runs.out);
  ASSERT_EQ(rows.size(), 2u) << runs.out;
  EXPECT_EQ(rows[0]["tag"], "before");
  EXPECT_EQ(rows[0]["note"], "the old loader");
  EXPECT_EQ(rows[0]["user_git_sha"], sha);
  EXPECT_EQ(rows[0]["user_git_dirty"], 0);
  EXPECT_EQ(rows[1]["user_git_dirty"], 1);

  const auto by_tag = Runx("compare before after --db " + db_ + " --format json");
  ASSERT_EQ(by_tag.status, 0) << by_tag.out;
  const auto c = nlohmann::json::parse(by_tag.out);
  EXPECT_EQ(c["a"]["run_id"], 1);
  EXPECT_EQ(c["b"]["run_id"], 2);
  EXPECT_EQ(c["a"]["tag"], "before");
  EXPECT_EQ(c["a"]["user_git_sha"], sha);
  EXPECT_EQ(c["b"]["user_git_dirty"], true);
  const auto by_sha = Runx("compare " + sha.substr(0, 8) + " after --db " + db_);
  EXPECT_EQ(by_sha.status, 0) << by_sha.out;
  EXPECT_NE(by_sha.out.find("A: run 1 'before' of tiny_compare at commit " + sha.substr(0, 7) + ":"), std::string::npos)
      << by_sha.out;
  EXPECT_NE(by_sha.out.find("note: the old loader"), std::string::npos) << by_sha.out;
  EXPECT_NE(by_sha.out.find("your commit: " + sha.substr(0, 7) + " vs "), std::string::npos) << by_sha.out;
  EXPECT_NE(by_sha.out.find("-dirty\n"), std::string::npos) << by_sha.out;  // B at its commit, dirty
  const auto self = Runx("compare before before --db " + db_);
  EXPECT_NE(self.out.find("A and B are both run 1: a run compared with itself measures nothing"), std::string::npos)
      << self.out;

  // Two processes a variant and nothing earlier: within-run spread only; the strict gate fails on
  // whatever the evidence cannot judge, the plain gate only on a regression.
  const auto strict = Runx("compare before after --db " + db_ + " --format json --fail-on-inconclusive");
  const auto strict_json = nlohmann::json::parse(strict.out);
  EXPECT_EQ(strict.status, strict_json["gate_failures"].empty() ? 0 : 1) << strict.out;
  for (const auto& v : strict_json["variants"]) {
    if (v["verdict"] == "inconclusive") {
      EXPECT_NE(std::find(strict_json["gate_failures"].begin(), strict_json["gate_failures"].end(), v["label_a"]),
                strict_json["gate_failures"].end())
          << strict.out;
    }
  }

  // A plain rerun reuses both runs' trials: it is recorded, but history shows two runs.
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q").status, 0);
  EXPECT_EQ(Runx("query --db " + db_ + " --format csv \"SELECT count(*) AS n FROM runs\"").out, "n\r\n3\r\n");
  const auto history = Runx("history tiny_compare --db " + db_ + " --format json");
  ASSERT_EQ(history.status, 0) << history.out;
  const auto points = nlohmann::json::parse(history.out);
  ASSERT_EQ(points.size(), 4u) << history.out;  // runs 2 and 1, two variants each: run 3 measured nothing
  EXPECT_EQ(points[0]["run_id"], 2);
  EXPECT_EQ(points[0]["tag"], "after");
  const auto text = Runx("history tiny_compare --db " + db_);
  EXPECT_NE(text.out.find("note: the old loader"), std::string::npos) << text.out;
}

// Two shards of one plan run into one store are one sweep: one run in history, and its speedup
// table has every variant against the baseline that only shard 0 measured.
TEST_F(CompareCli, ShardsIntoOneStoreAreOneSweep) {
  const std::string file = Write("tiny.yaml", kTiny);
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q --shard 0/2").status, 0);
  const auto second = Runx(file + " --db " + db_ + " --shard 1/2");
  ASSERT_EQ(second.status, 0) << second.out;
  // The end-of-run table of the second shard covers the whole sweep: both variants.
  EXPECT_NE(second.out.find("\nbaseline "), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("\nbatch_size=8 "), std::string::npos) << second.out;
  const auto history = Runx("history tiny_compare --db " + db_ + " --format json");
  const auto rows = nlohmann::json::parse(history.out);
  ASSERT_EQ(rows.size(), 2u) << history.out;  // one run of two variants
  EXPECT_EQ(rows[0]["run_id"], 1);
  EXPECT_EQ(rows[0]["runs"], "1,2");
  EXPECT_EQ(rows[0]["trials"], 2);
  const auto stats = Runx("query --db " + db_ +
                          " --format json \"SELECT run_id, label, speedup FROM variant_stats "
                          "WHERE run_id = 2 ORDER BY label\"");
  const auto s = nlohmann::json::parse(stats.out);
  ASSERT_EQ(s.size(), 2u) << stats.out;
  for (const auto& row : s) EXPECT_FALSE(row["speedup"].is_null()) << stats.out;
}

TEST_F(CompareCli, BadArgumentsExit2) {
  FillRegressionStore(db_);
  const auto threshold = Runx("compare 1 2 --db " + db_ + " --threshold lots");
  EXPECT_EQ(threshold.status, 2);
  EXPECT_NE(threshold.out.find("--threshold 'lots' is not a threshold"), std::string::npos) << threshold.out;
  const auto missing = Runx("compare 1 9 --db " + db_);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("no run 9 in results store"), std::string::npos) << missing.out;
  const auto label = Runx("compare 1:base 2:nope --db " + db_);
  EXPECT_EQ(label.status, 2);
  EXPECT_NE(label.out.find("run 2 has no variant 'nope'"), std::string::npos) << label.out;
  const auto half = Runx("compare 1:base 2 --db " + db_);
  EXPECT_EQ(half.status, 2);
  const auto nostore = Runx("compare 1 2 --db " + (dir_ / "none.db").string());
  EXPECT_EQ(nostore.status, 2);
  EXPECT_FALSE(fs::exists(dir_ / "none.db"));
  EXPECT_EQ(Runx("history nope --db " + db_).status, 2);
}

}  // namespace
