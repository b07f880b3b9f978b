#pragma once
// What `runx report` draws, read from the store and computed with the report's own statistics
// (Summarize's verdicts, Percentile, BuildHistory): per run its variants' speedups, step times,
// loss curves, memory and auto_batch frontier, and per experiment its history over builds.
// Plain data: html_charts.h turns it into Vega specs, html.h into the page. No LibTorch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/compare.h"
#include "report/history.h"
#include "report/report.h"
#include "store/history.h"
#include "store/store.h"

namespace runx::report {

struct HtmlOptions {
  double threshold = kDefaultThreshold;  ///< the history's and the A-vs-B comparison's verdicts
  int history_runs = 20;                 ///< newest runs of each experiment's history; 0: all
  /// Step-time points drawn per variant (every k-th measured step beyond that); the boxes and
  /// figures use every step.
  int max_points = 1000;
};

/// A variant's measured step times (all ok trials): the box of the distribution chart.
struct StepBox {
  std::string label;
  double p10 = 0, q1 = 0, median = 0, q3 = 0, p90 = 0;
  int steps = 0;   ///< measured steps behind the box
  int shown = 0;   ///< of which drawn as points
  int stride = 1;  ///< every stride-th step is drawn
};

/// One measured step drawn as a point.
struct StepPoint {
  std::string label;
  int repeat = 0;  ///< the trial's repeat_index
  double ms = 0;
};

/// A variant's loss at one training step: the median over its ok repeats that have the step.
struct LossCurvePoint {
  std::string label;
  int64_t step = 0;  ///< position in training (warmup steps first, store::LossPoint)
  double loss = 0;
  int repeats = 0;
};

/// A variant's median loss minus the baseline's at the same step (both must have it).
struct LossDrift {
  std::string label;
  int64_t step = 0;
  double delta = 0;
};

/// Memory of a variant: the maximum over its ok trials of one memory metric.
struct MemoryBar {
  std::string label;
  std::string metric;  ///< "peak_mem_bytes" | "reserved_mem_bytes"
  double bytes = 0;
};

/// One auto_batch probe of one trial (the metrics auto_batch.* with the probe as their step).
struct FrontierProbe {
  std::string label;
  int64_t trial_id = 0;
  int repeat = 0;
  int64_t probe = 0;
  double batch = 0;
  bool fits = false;
  std::optional<double> step_ms, samples_per_s, peak_bytes;  ///< fitting probes only
};

/// The batch auto_batch chose for a trial (auto_batch.chosen).
struct FrontierChoice {
  std::string label;
  int64_t trial_id = 0;
  int repeat = 0;
  double batch = 0;
};

/// One run of the report.
struct RunReport {
  store::RunOverview run;
  std::vector<VariantRow> variants;  ///< Summarize, with speedups and their verdicts
  std::vector<StepBox> step_boxes;   ///< variants with measured steps, in variant order
  std::vector<StepPoint> step_points;
  std::vector<LossCurvePoint> loss;
  std::vector<LossDrift> drift;  ///< empty without a baseline with losses
  std::vector<MemoryBar> memory;
  std::vector<FrontierProbe> probes;  ///< empty when no trial ran auto_batch
  std::vector<FrontierChoice> chosen;
};

/// How far a run's throughput of one variant can be trusted: the 95% interval of its processes'
/// mean, exp(mean ln rate ± t(0.975, n-1) sd/√n), each ok trial with measured steps one process
/// and its pooled throughput one rate. Drawn as the history's whiskers: a point measured by one
/// process has none, since one process cannot tell how much processes differ.
struct RateInterval {
  double low = 0;
  double high = 0;
  int processes = 0;
};
/// The interval of `rates` (samples/s of each process, > 0); nullopt with fewer than two.
std::optional<RateInterval> ProcessInterval(const std::vector<double>& rates);

/// The interval of a variant (by label) in one run of a history.
struct HistoryInterval {
  int64_t run_id = 0;
  std::string label;
  RateInterval interval;
};

/// The history of one experiment of the report (BuildHistory: newest first).
struct ExperimentHistory {
  std::string experiment;
  double threshold = kDefaultThreshold;  ///< of the verdicts
  std::vector<HistoryRun> runs;
  /// Of each run and variant with two processes or more (ProcessInterval), in `runs` order.
  std::vector<HistoryInterval> intervals;
};

/// `runx compare A B` as the page shows it when the report names exactly two runs: the same
/// Comparison (Compare with SpreadBook::Read of both sides' trials, the report's threshold) and
/// the same lines around its table.
struct RunComparison {
  store::RunOverview a, b;
  Comparison comparison;
  std::vector<std::string> environment;  ///< EnvironmentDifferences(a, b)
  std::vector<std::string> remarks;      ///< what compare prints under its table (no gate)
};

/// The comparison of runs `a` and `b` of `store` against ±`threshold`.
RunComparison BuildRunComparison(store::Store& store, int64_t a, int64_t b, double threshold);

struct HtmlReport {
  HtmlOptions options;
  /// When exactly two distinct runs are asked for (A, then B): B against A, as `runx compare A B`
  /// says it.
  std::optional<RunComparison> comparison;
  std::vector<RunReport> runs;               ///< in the order asked for
  std::vector<ExperimentHistory> histories;  ///< one per experiment of the runs, first-seen order
};

/// The report of runs `run_ids` (each once, in order; exactly two distinct runs are also compared).
/// Throws store::StoreError when a run is
/// missing or the store cannot be read.
HtmlReport BuildHtmlReport(store::Store& store, const std::vector<int64_t>& run_ids, const HtmlOptions& options);

/// One run's part of it (BuildHtmlReport without the histories).
RunReport BuildRunReport(store::Store& store, int64_t run_id, const HtmlOptions& options);

}  // namespace runx::report
