#pragma once
// The end-of-sweep report: one row per variant (all trials of a sweep with one label), its
// figures, and its speedup over the baseline with its verdict (report/verdict.h). No LibTorch.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/noise.h"
#include "report/stats.h"
#include "report/table.h"
#include "report/verdict.h"
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
  std::optional<double> samples_per_s;      ///< pooled over those steps
  std::optional<int64_t> peak_mem_bytes;    ///< max over the ok trials
  std::optional<double> final_loss;         ///< median over the ok trials
  std::optional<double> accuracy;           ///< median over the ok trials
  std::optional<double> accuracy_delta;     ///< accuracy minus the baseline's; empty for the baseline
  std::optional<double> joules_per_sample;  ///< median over the ok trials that were metered
  std::optional<double> power_w;            ///< average watts of the measured steps, likewise
  /// vs the baseline, judged against kDefaultThreshold; empty for the baseline itself, when
  /// either side has no ok trial with measured steps, and for figures only (SummarizeFigures).
  std::optional<Ratio> speedup;
  /// The noise guards on the ok trials' measured steps (CheckNoise with the default limits).
  NoiseCheck noise;
};

/// The threshold the report's noise guard (and `runx compare` by default) resolves: 2%.
inline constexpr double kDefaultThreshold = 0.02;

/// One row per variant of `trials` (one run's trials, as Store::ReadRunTrials gives them), in the
/// order the variants first ran, each non-baseline variant's speedup judged by JudgeRatio
/// against the baseline with `spreads` (SpreadBook::Read of the same trials).
std::vector<VariantRow> Summarize(const std::vector<store::RunTrial>& trials, const SpreadBook& spreads);
/// The same without speedups (cheaper, for `runx history`).
std::vector<VariantRow> SummarizeFigures(const std::vector<store::RunTrial>& trials);

/// Summarize over run `run_id` of `store`, with the store's earlier measurements of its
/// configurations. Throws store::StoreError when there is no such run.
std::vector<VariantRow> Summarize(store::Store& store, int64_t run_id);

/// An aligned text table for people, one line per variant (ends in a newline; "" for no rows):
///   variant   trials  step ms (p10-p90)      samples/s  peak mem  ...  speedup (95% CI)
///   baseline  3/3     117.20 (117.10-117.30)    2184.3  20.9 GiB  ...  1.00
/// Where a variant was metered, "J/sample" and "W" (the average draw) follow "peak mem".
/// The speedup's verdict follows it ("1.47 (1.29-1.69) faster"; "0.98 inconclusive"); a last,
/// unnamed column holds notes: "busy machine", "unstable" (see RenderNoise), and the statuses
/// of failed trials.
std::string RenderReport(const std::vector<VariantRow>& rows);

/// The report's table for people (what RenderReport aligns; markdown takes it as is).
TextTable ReportTextTable(const std::vector<VariantRow>& rows);
/// The report's table for tools: one column per figure (label, is_baseline, trials, ok_trials,
/// step_ms_median, step_ms_p10, step_ms_p90, samples_per_s, peak_mem_bytes, final_loss,
/// accuracy, accuracy_delta, speedup, speedup_ci_low, speedup_ci_high, significant, verdict,
/// why, speedup_se (standard error of ln speedup), speedup_df, unstable, noise, statuses,
/// joules_per_sample, power_w).
DataTable ReportDataTable(const std::vector<VariantRow>& rows);

/// The lines under the table: why a speedup is inconclusive, a busy machine, and one warning
/// per unstable variant, e.g.
///   "inconclusive: bf16: the interval reaches beyond ±2%; ~12 repeats would resolve it (now 3)\n"
///   "noise: bf16: repeats disagree (medians 2.20-3.79 ms, 72% apart > 10%)\n"; "" when none.
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
