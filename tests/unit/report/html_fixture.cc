#include "html_fixture.h"

#include <fmt/format.h>

namespace runx::report::testing {

void AddRun4(const std::string& db) {
  store::Store store = store::Store::Open(db);
  const int64_t mlp = store.AddExperiment("mlp_amp", "experiments/mlp_amp.yaml", "name: mlp_amp\n", "sha-mlp");
  store::RunInfo info;
  info.experiment_id = mlp;
  info.started_at = "2026-12-04T10:00:00Z";
  info.host = "box";
  info.runx_version = "0.1.0";
  info.git_sha = "cccc333";
  info.git_dirty = true;
  info.build_type = "Release";
  info.runx_build = "build-cccc333";
  const int64_t run = store.BeginRun(info);
  store.AddRunEnvironment(run, {{"host", "box"}, {"plan.order_seed", "7"}, {"noise.cpu_governor", "performance"}});
  int order = 0;
  for (const int repeat : {0, 1}) {
    for (const bool fast : {false, true}) {
      store::TrialRecord t =
          store::testing::MakeTrial(run, order++, {fast ? "fast" : "baseline", !fast, repeat, "ok", "", 1, 1});
      const double scale = fast ? 0.5 : 1.0;
      t.steps = {{"warmup", 0, 12 * scale, 0, 8, 3.0 + (fast ? 0.5 : 0.0)}};
      for (int i = 0; i < 4; ++i) {
        t.steps.push_back({"measure", i, (10 + 0.1 * i) * scale, 0, 8, 2.0 - 0.5 * i + (fast ? 0.5 : 0.0)});
      }
      t.metrics = {{"peak_mem_bytes", (fast ? 50 : 100 + 10 * repeat) * kMiB, "bytes", std::nullopt}};
      if (!fast) t.metrics.push_back({"reserved_mem_bytes", (200 - 10 * repeat) * kMiB, "bytes", std::nullopt});
      if (fast) {
        const double batches[] = {8, 16, 32};
        const double ms[] = {2, 3, 0};
        for (int p = 0; p < 3; ++p) {
          t.metrics.push_back({"auto_batch.batch", batches[p], "", p});
          t.metrics.push_back({"auto_batch.fits", p < 2 ? 1.0 : 0.0, "", p});
          if (p == 2) continue;
          t.metrics.push_back({"auto_batch.step_ms", ms[p], "ms", p});
          t.metrics.push_back({"auto_batch.samples_per_s", batches[p] * 1000 / ms[p], "samples/s", p});
          t.metrics.push_back({"auto_batch.peak_bytes", 10 * (p + 1) * kMiB, "bytes", p});
        }
        t.metrics.push_back({"auto_batch.chosen", 16, "", std::nullopt});
      }
      store.RecordTrial(t);
    }
  }
  store.EndRun(run, RunStatus::kOk, "2026-12-04T11:00:00Z");
}

void AddSteadyRuns(const std::string& db) {
  store::Store store = store::Store::Open(db);
  const int64_t steady = store.AddExperiment("steady", "steady.yaml", "name: steady\n", "sha-steady");
  int day = 10;
  for (const double ms : {60.0, 61.0, 60.0, 61.0, 80.0, 60.0}) {
    store::RunInfo info;
    info.experiment_id = steady;
    info.started_at = fmt::format("2026-12-{}T10:00:00Z", day);
    info.host = "box";
    info.git_sha = "cccc333";
    info.git_dirty = false;
    if (day >= 14) info.context.user_git_sha = "1234567abc";
    if (day >= 14) info.context.user_git_dirty = day == 15;
    if (day == 15) info.context.tag = "fix";
    const int64_t run = store.BeginRun(info);
    // 5 measured steps of ms..ms+4 ms, 64 samples each; the metric as the engine computes it.
    store.RecordTrial(store::testing::MakeTrial(run, 0, {"steady", true, 0, "ok", "", 320 / (5 * ms + 10) * 1000, ms}));
    store.EndRun(run, RunStatus::kOk, info.started_at);
    ++day;
  }
}

int64_t AddThreeProcessRun(const std::string& db) {
  store::Store store = store::Store::Open(db);
  const int64_t mlp = store.AddExperiment("mlp_amp", "experiments/mlp_amp.yaml", "name: mlp_amp\n", "sha-mlp");
  store::RunInfo info;
  info.experiment_id = mlp;
  info.started_at = "2026-12-20T10:00:00Z";
  info.host = "box";
  info.git_sha = "dddd444";
  const int64_t run = store.BeginRun(info);
  int order = 0;
  for (const double ms : {60.0, 62.0, 66.0}) {
    store.RecordTrial(
        store::testing::MakeTrial(run, order, {"baseline", true, order, "ok", "", 320 / (5 * ms + 10) * 1000, ms}));
    ++order;
  }
  store.EndRun(run, RunStatus::kOk, info.started_at);
  return run;
}

}  // namespace runx::report::testing
