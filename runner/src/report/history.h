#pragma once
// `runx history`: the runs of an experiment, newest first, each variant's figures and how it
// moved since it was last measured (compare's verdict against the latest earlier run with the same
// configuration: ▲ faster, ▼ slower beyond the threshold and the noise). No LibTorch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/compare.h"
#include "report/report.h"
#include "report/table.h"
#include "store/history.h"
#include "store/store.h"

namespace runx::report {

struct HistoryVariant {
  VariantRow figures;  ///< Summarize's row (no speedup interval)
  /// Against the same configuration in the latest earlier run that has it; empty when none has.
  std::optional<ComparedVariant> vs_previous;
  std::optional<int64_t> previous_run;  ///< that run
  /// The trials compared ran on another platform (LibTorch, CUDA, cuDNN, device; on the CPU the
  /// BLAS): the change may be the platform's, not the code's.
  bool platform_changed = false;
};

struct HistoryRun {
  store::RunOverview run;
  std::optional<int64_t> run_below;  ///< the next older run of the list, where there is one
  std::vector<HistoryVariant> variants;
};

/// The history of `run_ids` (newest first, as store::ListRuns gives them): the first `shown`
/// runs, each variant compared with the same configuration in the latest older run of the list
/// that has it (the run below, or further back when a run in between did not measure it: pass
/// every run of the experiment, not only those shown). Runs are read as far back as a variant
/// needs, no further.
std::vector<HistoryRun> BuildHistory(store::Store& store, const std::vector<int64_t>& run_ids, size_t shown,
                                     const CompareOptions& options);

/// "▲ +5.1%" (faster), "▼ -8.0%" (slower), "+0.4%" (no change), "new" (in no earlier run), "-"
/// (no figures); with " (run N)" when the run compared with is not `run_below`.
std::string ChangeCell(const HistoryVariant& v, std::optional<int64_t> run_below = std::nullopt);

/// For people: run, build (git sha, -dirty), date, host, device, status, variant, samples/s,
/// step ms (p10-p90), vs previous; a run's own columns only on its first line.
TextTable HistoryTextTable(const std::vector<HistoryRun>& runs);
/// For tools: one row per run and variant: run_id, git_sha, git_dirty, runx_build, started_at,
/// host, devices, status, label, ok_trials, trials, samples_per_s, step_ms_median, step_ms_p10,
/// step_ms_p90, previous_run, ratio, ratio_ci_low, ratio_ci_high, change (faster | slower |
/// no change | new), unstable, platform_changed.
DataTable HistoryDataTable(const std::vector<HistoryRun>& runs);

/// `runx history`'s output in `format` (JSON: the rows of HistoryDataTable as an array).
std::string RenderHistory(const std::vector<HistoryRun>& runs, const std::string& experiment, OutputFormat format,
                          double threshold);

}  // namespace runx::report
