#pragma once
// The end-of-sweep report: one row per variant (all trials of a sweep with one label), its
// figures, and its speedup over the baseline with a 95% bootstrap interval. No LibTorch.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/noise.h"
#include "report/stats.h"
#include "report/table.h"
#include "store/store.h"

namespace runx::report {

/// The figures of one variant. Step times, throughput, memory and quality come from the
/// variant's `ok` trials only; an optional is empty when no ok trial has the figure.
struct VariantRow {
  std::string label;
  bool is_baseline = false;
  int trials = 0;
  int ok_trials = 0;
  /// Trials per status, in kTrialStatuses order, statuses with no trial left out.
  std::vector<std::pair<TrialStatus, int>> statuses;
  /// "" when every trial is ok, else e.g. "2 ok, 1 oom".
  std::string status_summary;
  std::optional<double> step_ms_median;  ///< over all measured steps of the ok trials
  std::optional<double> step_ms_p10;
  std::optional<double> step_ms_p90;
  std::optional<double> samples_per_s;   ///< pooled over those steps
  std::optional<int64_t> peak_mem_bytes; ///< max over the ok trials
  std::optional<double> final_loss;      ///< median over the ok trials
  std::optional<double> accuracy;        ///< median over the ok trials
  std::optional<double> accuracy_delta;  ///< accuracy minus the baseline's; empty for the baseline
  /// vs the baseline; empty for the baseline itself and when either side has no ok trial with
  /// measured steps.
  std::optional<SpeedupInterval> speedup;
  /// The noise guards on the ok trials' measured steps (CheckNoise with the default limits).
  NoiseCheck noise;
  /// For an unstable variant: roughly how many repeats its speedup interval needs to resolve
  /// kDefaultThreshold (RepeatsNeeded); empty when it resolves it or has no interval.
  std::optional<int> repeats_needed;
};

/// The threshold the report's noise guard (and `runx compare` by default) resolves: 2%.
inline constexpr double kDefaultThreshold = 0.02;

/// One row per variant of `trials` (one run's trials, as Store::ReadRunTrials gives them), in the
/// order the variants first ran. The bootstrap's repeats are the variant's ok trials with
/// measured steps, in repeat_index order (then id), each with its measured steps in step order:
/// what BootstrapSpeedup gets to reproduce an interval. Every variant's bootstrap uses `seed` and
/// `resamples`, so a row does not depend on the other variants. resamples = 0: the figures only,
/// no speedup intervals (cheaper, for `runx history`).
std::vector<VariantRow> Summarize(const std::vector<store::RunTrial>& trials, uint64_t seed,
                                  int resamples = kDefaultResamples);

/// Summarize over run `run_id` of `store`. Throws store::StoreError when there is no such run.
std::vector<VariantRow> Summarize(store::Store& store, int64_t run_id, uint64_t seed,
                                  int resamples = kDefaultResamples);

/// An aligned text table for people, one line per variant (ends in a newline; "" for no rows):
///   variant   trials  step ms (p10-p90)      samples/s  peak mem  ...  speedup (95% CI)
///   baseline  3/3     117.20 (117.10-117.30)    2184.3  20.9 GiB  ...  1.00
/// A last, unnamed column holds notes: "not significant", "unstable" (see RenderNoise), and the
/// statuses of failed trials.
std::string RenderReport(const std::vector<VariantRow>& rows);

/// The report's table for people (what RenderReport aligns; markdown takes it as is).
TextTable ReportTextTable(const std::vector<VariantRow>& rows);
/// The report's table for tools: one column per figure (label, is_baseline, trials, ok_trials,
/// step_ms_median, step_ms_p10, step_ms_p90, samples_per_s, peak_mem_bytes, final_loss,
/// accuracy, accuracy_delta, speedup, speedup_ci_low, speedup_ci_high, significant, unstable,
/// noise, statuses).
DataTable ReportDataTable(const std::vector<VariantRow>& rows);

/// One warning line per unstable variant, e.g.
///   "noise: bf16: repeats disagree (medians 2.20-3.79 ms, 72% apart > 10%); ~12 repeats would
///   resolve 2% (now 3)\n"; "" when every variant is stable.
std::string RenderNoise(const std::vector<VariantRow>& rows);

/// What an exported report names besides its rows.
struct ReportContext {
  int64_t run_id = 0;
  std::string experiment;
};
/// The report in `format`, as `runx run --export-*` writes it: the aligned table or markdown
/// (with the noise lines after it), CSV (ReportDataTable), or JSON: {"run_id", "experiment",
/// "variants": [one object per row of ReportDataTable]}.
std::string ExportReport(const std::vector<VariantRow>& rows, OutputFormat format, const ReportContext& context);

/// The rows as the store keeps them (variant_stats): the baseline's speedup is 1.
std::vector<store::VariantStatsRow> ToVariantStats(const std::vector<VariantRow>& rows);

/// Persists `rows` as the variant_stats of `run_id`, replacing earlier ones (one transaction).
void WriteVariantStats(store::Store& store, int64_t run_id, const std::vector<VariantRow>& rows);

}  // namespace runx::report
