#pragma once
// `runx compare`: the variants of two runs (or two variants) side by side, the throughput ratio
// B/A with a 95% bootstrap interval (BootstrapSpeedup, as in the end-of-run report), a verdict
// against a threshold, and the noise guards. No LibTorch. The rule is in docs/design.md
// ("Comparing runs").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/noise.h"
#include "report/stats.h"
#include "report/table.h"
#include "store/history.h"
#include "store/store.h"

namespace runx::report {

enum class Change {
  kFaster,    ///< the whole interval lies above 1 + threshold
  kSlower,    ///< the whole interval lies below 1 - threshold: a regression
  kNoChange,  ///< the interval reaches into [1 - threshold, 1 + threshold]
};

/// The verdict on a ratio B/A (throughput: above 1 is faster).
struct Verdict {
  Change change = Change::kNoChange;
  /// kNoChange only: the whole interval lies inside the threshold band ("below the threshold");
  /// false when it reaches beyond it on either side ("inconclusive": more repeats may tell).
  bool within_threshold = false;
};

/// The rule: faster when low > 1 + threshold, slower when high < 1 - threshold, otherwise no
/// change; 1.01 (1.01-1.01) with a 2% threshold is no change, within the threshold.
Verdict Judge(const SpeedupInterval& ratio, double threshold);

/// "faster", "slower" or "no change".
const char* ChangeName(Change change);

/// "faster", "slower", "no change (below the 2% threshold)" or "no change (inconclusive)".
std::string VerdictText(const Verdict& verdict, double threshold);

/// A side of a comparison: the trials of a run (store::ReadRunTrials) and their identities
/// (store::ReadTrialIdentities), and optionally one variant label of it.
struct CompareSide {
  int64_t run_id = 0;
  std::vector<store::RunTrial> trials;
  std::map<int64_t, store::TrialIdentity> identities;
  std::optional<std::string> label;  ///< compare this variant only (RUN:LABEL)
};

struct CompareOptions {
  double threshold = 0.02;
  int resamples = kDefaultResamples;
  uint64_t seed = 0;
  NoiseLimits limits;
};

/// One variant present in both runs (same config identity), or the two variants asked for.
struct ComparedVariant {
  std::string label_a;
  std::string label_b;  ///< usually label_a; differs when variants are compared by name
  int ok_a = 0, trials_a = 0;
  int ok_b = 0, trials_b = 0;
  std::optional<double> samples_per_s_a, samples_per_s_b;  ///< pooled
  std::optional<double> step_ms_a, step_ms_b;              ///< median step time
  std::optional<SpeedupInterval> ratio;                    ///< B/A; empty when a side has no ok trial with steps
  Verdict verdict;
  NoiseCheck noise_a, noise_b;
  /// When the interval is inconclusive: roughly how many repeats per run would resolve the
  /// threshold (RepeatsNeeded on the ratio's interval).
  std::optional<int> repeats_needed;
  /// "" or why there is no ratio, e.g. "no ok trial in A".
  std::string note;
  std::string label() const { return label_a == label_b ? label_a : label_a + " -> " + label_b; }
};

struct Comparison {
  double threshold = 0.02;
  std::vector<ComparedVariant> variants;  ///< in A's order
  std::vector<std::string> only_in_a;     ///< labels of variants whose config B lacks
  std::vector<std::string> only_in_b;
  /// The variants slower beyond the threshold (labels).
  std::vector<std::string> Regressions() const;
};

/// Compares B with A. Whole runs: variants match on their config identity (trials.config_hash;
/// by label for trials migrated without one); a variant needs an ok trial with measured steps
/// on both sides for a ratio. Sides with a label: those two variants, whatever their identity.
/// Throws store::StoreError when a label names no variant of its run.
Comparison Compare(const CompareSide& a, const CompareSide& b, const CompareOptions& options);

/// What differs between the runs' environments, for the header: build (runx_build, git sha),
/// platform (LibTorch, CUDA, cuDNN, device), host, devices, and the noise-relevant environment
/// keys (noise.*); e.g. "runx build: a1b2c3d4e5f6 (git abc1234) vs 0f9e8d7c6b5a (git def5678*)".
/// Empty when nothing differs.
std::vector<std::string> EnvironmentDifferences(const store::RunOverview& a, const store::RunOverview& b);

/// A run's build for people: the short git sha, "-dirty" with uncommitted changes ("unknown").
std::string BuildName(const store::RunOverview& run);
/// "2026-12-03T10:00:00Z" -> "2026-12-03 10:00".
std::string ShortDate(const std::string& iso);

/// A run as a header line: "run 12 of quickstart: abc1234* Release, 2026-12-03 10:00, box, cpu, ok".
std::string DescribeRun(const store::RunOverview& run);

/// The comparison's table for people: variant, A and B samples/s, B/A (95% CI), change (effect
/// size: the ratio's interval as a percentage), verdict, notes (noise).
TextTable CompareTextTable(const Comparison& c);
/// For tools: label_a, label_b, samples_per_s_a, samples_per_s_b, step_ms_a, step_ms_b, ratio,
/// ratio_ci_low, ratio_ci_high, change_pct, verdict (faster|slower|no change), within_threshold,
/// unstable_a, unstable_b, repeats_needed, note.
DataTable CompareDataTable(const Comparison& c);

/// The whole output of `runx compare` in `format`: header lines (runs, environment differences),
/// the table, the variants only in one run, noise warnings and, when `gate` is set, the
/// regressions that fail it. JSON: {"a", "b", "threshold", "environment_differences",
/// "variants", "only_in_a", "only_in_b", "regressions"}.
std::string RenderComparison(const Comparison& c, const store::RunOverview& a, const store::RunOverview& b,
                             OutputFormat format, bool gate);

}  // namespace runx::report
