#pragma once
// `runx history`: the runs of an experiment, newest first, each variant's figures and how it
// moved since the run before (compare's verdict: ▲ faster, ▼ slower beyond the threshold and the
// noise). No LibTorch.
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
  /// Against the same configuration in the run before; empty when that run lacks it.
  std::optional<ComparedVariant> vs_previous;
};

struct HistoryRun {
  store::RunOverview run;
  std::optional<int64_t> previous_run;  ///< the run this one is compared with
  std::vector<HistoryVariant> variants;
};

/// The history of `run_ids` (newest first, as store::ListRuns gives them): the first `shown`
/// runs, each compared with the next one in the list (so pass one run more than is shown to
/// compare the oldest shown too).
std::vector<HistoryRun> BuildHistory(store::Store& store, const std::vector<int64_t>& run_ids, size_t shown,
                                     const CompareOptions& options);

/// "▲ +5.1%" (faster), "▼ -8.0%" (slower), "+0.4%" (no change), "new" (not in the run before),
/// "-" (no figures).
std::string ChangeCell(const HistoryVariant& v);

/// For people: run, build (git sha, -dirty), date, host, device, status, variant, samples/s,
/// step ms (p10-p90), vs previous; a run's own columns only on its first line.
TextTable HistoryTextTable(const std::vector<HistoryRun>& runs);
/// For tools: one row per run and variant: run_id, git_sha, git_dirty, runx_build, started_at,
/// host, devices, status, label, ok_trials, trials, samples_per_s, step_ms_median, step_ms_p10,
/// step_ms_p90, previous_run, ratio, ratio_ci_low, ratio_ci_high, change (faster | slower |
/// no change | new), unstable.
DataTable HistoryDataTable(const std::vector<HistoryRun>& runs);

/// `runx history`'s output in `format` (JSON: the rows of HistoryDataTable as an array).
std::string RenderHistory(const std::vector<HistoryRun>& runs, const std::string& experiment, OutputFormat format,
                          double threshold);

}  // namespace runx::report
