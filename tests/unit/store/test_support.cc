#include "test_support.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace runx::store::testing {

void TempDirTest::SetUp() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  dir_ = std::filesystem::temp_directory_path() /
         fmt::format("runx_store_test_{}_{}_{}", info->test_suite_name(), info->name(), static_cast<long>(::getpid()));
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
}

void TempDirTest::TearDown() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

TrialRecord MakeTrial(int64_t run_id, int order_index, const ExampleTrial& t) {
  TrialRecord r;
  r.run_id = run_id;
  r.label = t.label;
  r.config_hash = "h-" + t.label;
  r.env_hash = "env-box";
  r.platform_hash = "platform-box";
  r.config_json = fmt::format(R"({{"data":{{"batch_size":64}},"technique":"{}"}})", t.label);
  r.is_baseline = t.is_baseline;
  r.repeat_index = t.repeat_index;
  r.order_index = order_index;
  r.device = "cpu";
  const auto status = ParseTrialStatus(t.status);
  if (!status) throw std::invalid_argument("no trial status '" + t.status + "'");
  r.status = *status;
  r.error = t.error;
  r.error_detail = t.error;
  r.started_at = fmt::format("2026-12-0{}T10:0{}:00Z", run_id, order_index);
  r.finished_at = fmt::format("2026-12-0{}T10:0{}:30Z", run_id, order_index);
  r.environment = {{"omp_num_threads", "2"}};
  if (t.samples_per_s <= 0) return r;
  for (int i = 0; i < 2; ++i) {
    r.steps.push_back({"warmup", i, t.step_ms * 3, 1.0, 64, std::nullopt});
  }
  for (int i = 0; i < 5; ++i) {
    r.steps.push_back({"measure", i, t.step_ms + i, 0.5, 64, 2.0 - 0.25 * i});
  }
  r.metrics = {
      {"samples_per_s", t.samples_per_s, "samples/s", std::nullopt},
      {"step_ms_median", t.step_ms + 2, "ms", std::nullopt},
      {"step_ms_p10", t.step_ms + 0.5, "ms", std::nullopt},
      {"step_ms_p90", t.step_ms + 3.5, "ms", std::nullopt},
      {"peak_mem_bytes", 123456789.0 + order_index, "bytes", std::nullopt},
      {"final_loss", 1.0, "", std::nullopt},
      {"accuracy", 0.9 + 0.01 * order_index, "", std::nullopt},
      {"loss_scale", 65536, "", 0},
      {"loss_scale", 32768, "", 1},
  };
  return r;
}

void FillExampleStore(const std::string& path) {
  Store store = Store::Open(path);
  const int64_t mlp = store.AddExperiment("mlp_amp", "experiments/mlp_amp.yaml", "name: mlp_amp\n", "sha-mlp");
  const int64_t resnet =
      store.AddExperiment("resnet_cl", "experiments/resnet_cl.yaml", "name: resnet_cl\n", "sha-resnet");
  struct Sweep {
    int64_t experiment;
    std::string started_at;
    std::string git_sha;
    std::vector<ExampleTrial> trials;
  };
  const std::vector<Sweep> sweeps = {
      {mlp,
       "2026-12-01T10:00:00Z",
       "aaaa111",
       {{"baseline", true, 0, "ok", "", 1000, 64},
        {"baseline", true, 1, "ok", "", 1100, 58},
        {"bf16", false, 0, "ok", "", 1500, 42},
        {"fp16", false, 0, "incompatible", "fp16 autocast needs a CUDA device", 0, 0}}},
      {mlp,
       "2026-12-02T10:00:00Z",
       "bbbb222",
       {{"baseline", true, 0, "ok", "", 1050, 61}, {"bf16", false, 0, "ok", "", 1800, 35}}},
      {resnet,
       "2026-12-03T10:00:00Z",
       "bbbb222",
       {{"baseline", true, 0, "ok", "", 200, 320}, {"channels_last", false, 0, "ok", "", 260, 246}}},
  };
  for (const Sweep& s : sweeps) {
    RunInfo info;
    info.experiment_id = s.experiment;
    info.started_at = s.started_at;
    info.host = "box";
    info.runx_version = "0.1.0";
    info.git_sha = s.git_sha;
    info.git_dirty = false;
    info.build_type = "Release";
    info.runx_build = "build-" + s.git_sha;
    info.command = "runx run experiment.yaml";
    const int64_t run_id = store.BeginRun(info);
    store.AddRunEnvironment(run_id, {{"host", "box"}, {"libtorch_version", "1.13.0"}});
    for (size_t i = 0; i < s.trials.size(); ++i) {
      store.RecordTrial(MakeTrial(run_id, static_cast<int>(i), s.trials[i]));
    }
    store.EndRun(run_id, RunStatus::kOk, s.started_at.substr(0, 11) + "11:00:00Z");
  }
  store.RecordVariantStats(1, ExampleVariantStats());
  // Run 2's figures (pooled measured steps: 61-65 ms and 35-39 ms for 64 samples each).
  VariantStatsRow baseline2{"baseline", true, 1, 1, 63, 61.4, 64.6, 320.0 / 315 * 1000, 1.0};
  VariantStatsRow bf16_2{"bf16", false, 1, 1, 37, 35.4, 38.6, 320.0 / 185 * 1000};
  bf16_2.speedup = 315.0 / 185;
  store.RecordVariantStats(2, {baseline2, bf16_2});
}

std::vector<VariantStatsRow> ExampleVariantStats() {
  VariantStatsRow baseline{"baseline", true, 2, 2, 63, 58.9, 67.1, 640.0 / 630 * 1000, 1.0};
  VariantStatsRow bf16{"bf16", false, 1, 1, 44, 42.4, 45.6, 320.0 / 220 * 1000};
  bf16.speedup = (320.0 / 220) / (640.0 / 630);
  // No interval: within run 1 only the baseline has two processes (1 degree of freedom), and run
  // 2, the only other run of these configurations, is one run (none to tell how runs differ).
  bf16.verdict = "inconclusive";
  bf16.accuracy_delta = 0.92 - 0.905;
  return {baseline, bf16, {"fp16", false, 1, 0}};
}

int64_t CountRows(const std::string& path, const std::string& table) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  return db.execAndGet("SELECT count(*) FROM " + table).getInt64();
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void LoadVersion2Fixture(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec(ReadFileBytes(std::string(RUNX_SOURCE_DIR) + "/tests/unit/store/data/store_v2.sql"));
}

}  // namespace runx::store::testing
