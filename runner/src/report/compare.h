#pragma once
// `runx compare`: the variants of two runs (or two variants) side by side, the throughput ratio
// B/A with its verdict (report/verdict.h, the end-of-run report's rule), and the noise guards. No
// LibTorch. The rule is in docs/design.md ("Comparing runs", "Verdicts").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/noise.h"
#include "report/stats.h"
#include "report/table.h"
#include "report/verdict.h"
#include "store/history.h"
#include "store/store.h"

namespace runx::report {

/// A side of a comparison: the trials of a run (store::ReadRunTrials), and optionally one variant
/// label of it.
struct CompareSide {
  int64_t run_id = 0;
  std::vector<store::RunTrial> trials;
  std::optional<std::string> label;  ///< compare this variant only (RUN:LABEL)
};

struct CompareOptions {
  double threshold = 0.02;
  NoiseLimits limits;
};

/// One variant present in both runs (same config identity), or the two variants asked for.
struct ComparedVariant {
  std::string label_a;
  std::string label_b;  ///< usually label_a; differs when variants are compared by name
  int ok_a = 0, trials_a = 0;
  int ok_b = 0, trials_b = 0;
  std::optional<double> samples_per_s_a, samples_per_s_b;          ///< pooled
  std::optional<double> step_ms_a, step_ms_b;                      ///< median step time
  std::optional<double> joules_per_sample_a, joules_per_sample_b;  ///< median over metered ok trials
  std::optional<double> power_w_a, power_w_b;
  std::optional<Ratio> ratio;  ///< B/A and its verdict; empty when a side has no ok trial with steps
  NoiseCheck noise_a, noise_b;
  /// "" or why there is no ratio, e.g. "no ok trial in A".
  std::string note;
  std::string label() const { return label_a == label_b ? label_a : label_a + " -> " + label_b; }
};

/// What fails `runx compare`'s gate.
enum class Gate {
  kOff,
  kRegressions,                ///< --fail-on-regression: a variant slower beyond the threshold
  kRegressionsOrInconclusive,  ///< --fail-on-inconclusive: also a variant the evidence cannot judge
};

struct Comparison {
  double threshold = 0.02;
  std::vector<ComparedVariant> variants;  ///< in A's order
  std::vector<std::string> only_in_a;     ///< labels of variants whose config B lacks
  std::vector<std::string> only_in_b;
  /// The variants slower beyond the threshold (labels).
  std::vector<std::string> Regressions() const;
  /// The variants whose ratio is inconclusive (labels).
  std::vector<std::string> Inconclusive() const;
  /// The variants that fail `gate`: Regressions, and with kRegressionsOrInconclusive also
  /// Inconclusive and those without a ratio.
  std::vector<std::string> GateFailures(Gate gate) const;
};

/// Compares B with A. Whole runs: variants match on their config identity (trials.config_hash;
/// by label for trials migrated without one); a variant needs an ok trial with measured steps
/// on both sides for a ratio, judged by JudgeRatio with `spreads` (the store's earlier
/// measurements of the same configurations). Sides with a label: those two variants, whatever
/// their identity. Throws store::StoreError when a label names no variant of its run.
Comparison Compare(const CompareSide& a, const CompareSide& b, const CompareOptions& options,
                   const SpreadBook& spreads = {});

/// What differs between the runs' environments, for the header: build (runx_build, git sha),
/// platform (LibTorch, CUDA, cuDNN, device), host, devices, and the noise-relevant environment
/// keys (noise.*); e.g. "runx build: a1b2c3d4e5f6 (git abc1234) vs 0f9e8d7c6b5a (git def5678*)".
/// Empty when nothing differs.
std::vector<std::string> EnvironmentDifferences(const store::RunOverview& a, const store::RunOverview& b);

/// A run's build for people: the short git sha, "-dirty" with uncommitted changes ("unknown").
std::string BuildName(const store::RunOverview& run);
/// The commit of the user's repository for people: the short sha, "-dirty" with uncommitted
/// changes; "-" outside a repository.
std::string UserCommitName(const store::RunOverview& run);
/// "12", or "12 (4 runs)" for a sweep that ran as several runs (shards).
std::string RunName(const store::RunOverview& run);
/// "2026-12-03T10:00:00Z" -> "2026-12-03 10:00".
std::string ShortDate(const std::string& iso);

/// A run as a header line: "run 12 'before-fix' of quickstart at commit 1a2b3c4-dirty: runx abc1234
/// Release, 2026-12-03 10:00, box, cpu, ok" (tag and commit where it has them; a note follows).
std::string DescribeRun(const store::RunOverview& run);

/// The comparison's table for people: variant, A and B samples/s, B/A (95% CI), change (effect
/// size: the ratio's interval as a percentage), verdict, notes (noise, load). Where a side was
/// metered, "A J/sample" and "B J/sample" follow "B samples/s".
TextTable CompareTextTable(const Comparison& c);
/// For tools: label_a, label_b, samples_per_s_a, samples_per_s_b, step_ms_a, step_ms_b, ratio,
/// ratio_ci_low, ratio_ci_high, change_pct, verdict (faster|slower|no change|inconclusive),
/// within_threshold, why, caution, processes_a, processes_b, ratio_se (of ln ratio), ratio_df, other_cpus_a,
/// other_cpus_b, unstable_a, unstable_b, repeats_needed, noise, note, joules_per_sample_a,
/// joules_per_sample_b, power_w_a, power_w_b.
DataTable CompareDataTable(const Comparison& c);

/// The lines after the table: hints for a comparison that cannot answer what was asked (a run
/// with itself; --set values that leave no configuration in common), variants of one run only,
/// why a verdict is inconclusive or cautioned, noise, and, unless `gate` is kOff, what fails it.
std::vector<std::string> CompareRemarks(const Comparison& c, const store::RunOverview& a, const store::RunOverview& b,
                                        Gate gate);

/// The whole output of `runx compare` in `format`: header lines (runs, environment differences),
/// the table, the variants only in one run, why a verdict is inconclusive, noise warnings and,
/// unless `gate` is kOff, what fails it. JSON: {"a", "b", "threshold", "environment_differences",
/// "variants", "only_in_a", "only_in_b", "regressions", "inconclusive", "gate_failures",
/// "remarks"}.
std::string RenderComparison(const Comparison& c, const store::RunOverview& a, const store::RunOverview& b,
                             OutputFormat format, Gate gate);

}  // namespace runx::report
