#pragma once
// The one rule behind every faster/slower runx prints: the end-of-run table's speedups, `runx
// compare` and its gate, `runx history`'s arrows and the HTML report. A ratio of throughputs B/A
// gets a 95% interval only from evidence across processes (repeats, or the spread of earlier
// processes of the same configurations on the same host in the store), is judged against a
// threshold, and is downgraded when the two sides ran beside different loads. No LibTorch.
// Why: docs/design.md ("Verdicts: evidence across processes").
#include <optional>
#include <string>
#include <vector>

#include "report/stats.h"
#include "store/history.h"
#include "store/store.h"

namespace runx::report {

enum class Change {
  kFaster,        ///< the whole interval lies above 1 + threshold
  kSlower,        ///< the whole interval lies below 1 - threshold: a regression
  kNoChange,      ///< the whole interval lies within ±threshold
  kInconclusive,  ///< the evidence cannot tell (no spread, an interval across the band, load differed)
};

/// "faster", "slower", "no change", "inconclusive".
const char* ChangeName(Change change);

/// The repeats runx recommends when a configuration's run-to-run spread is unknown: three
/// processes a side measure it (4 degrees of freedom for a comparison).
inline constexpr int kRecommendedRepeats = 3;

/// The rule on an interval: faster when low > 1 + threshold, slower when high < 1 - threshold,
/// no change when it lies within [1 - threshold, 1 + threshold] (edges included), else
/// inconclusive.
Change JudgeInterval(const RatioInterval& interval, double threshold);

/// What else ran beside a side's trials during their measured steps.
struct Load {
  std::optional<double> other_cpus;  ///< median over its trials of noise.other_cpus
  std::optional<double> cpus;        ///< the machine's CPUs (noise.cpus)
  std::optional<double> trial_cpus;  ///< median of the CPUs the trials' own processes used
};
/// CPUs used by other processes from which a measurement counts as taken on a busy machine:
/// 10% of the machine's CPUs, at least 0.2 of one.
double BusyLimit(std::optional<double> cpus);
bool Busy(const Load& load);
/// "other processes used 0.95 of 2 CPUs".
std::string DescribeLoad(const Load& load);
/// An estimate of how much of a side's time other processes took: when others and the trials
/// together asked for more CPUs than the machine has, the share of CPU time the trials lost to
/// fair sharing, 1 - cpus / (other_cpus + trial_cpus), weighted by how CPU-bound the trials were
/// (their CPUs, at most 1: a trial that mostly waits on a device or a sleep gets the CPU as soon
/// as it wakes); 0 when they fit the machine. nullopt when not recorded.
std::optional<double> LoadCost(const Load& load);

/// Earlier measurements of configurations (store::ReadProcessRates), from which the run-to-run
/// spread of a comparison is estimated together with its own trials.
class SpreadBook {
 public:
  SpreadBook() = default;  ///< knows no earlier measurement: the compared trials alone
  explicit SpreadBook(std::vector<store::ProcessRate> rates) : rates_(std::move(rates)) {}
  /// Every ok measurement in `store` of the configurations of `trials`.
  static SpreadBook Read(store::Store& store, const std::vector<store::RunTrial>& trials);
  /// The spreads behind comparing the processes `a` and `b`: processes of the same configuration,
  /// environment and host as theirs, in load class `busy` (busy or not; the compared processes
  /// themselves always count). Within: every such process about the mean of its run (sweep);
  /// between: the means of the runs other than the compared ones about their mean.
  SpreadEvidence For(const std::vector<const store::RunTrial*>& a, const std::vector<const store::RunTrial*>& b,
                     bool busy) const;

 private:
  std::vector<store::ProcessRate> rates_;
};

/// A ratio of throughputs B/A (a speedup over the baseline, or a run against another) and what
/// runx concludes from it.
struct Ratio {
  double estimate = 0;                    ///< pooled throughput of B over A's
  std::optional<RatioInterval> interval;  ///< 95%; empty when the run-to-run spread is unknown
  SpreadEvidence evidence;                ///< behind the interval
  LogRatioError error;                    ///< of ln(estimate)
  bool same_run = false;                  ///< both sides measured by one run (sweep)
  int processes_a = 0;                    ///< A's ok trials with measured steps
  int processes_b = 0;
  Load load_a, load_b;
  Change change = Change::kInconclusive;
  /// kInconclusive: why, e.g. "run-to-run spread unknown: 1 process each; repeats: 3 would
  /// measure it", "the interval reaches beyond ±2%", "load differed: ...".
  std::string why;
  /// A verdict that stands but was measured on a busy machine: "busy machine: other processes
  /// used 0.95 of 2 CPUs"; "" otherwise.
  std::string caution;
  /// kInconclusive with a known spread: roughly how many repeats a side would resolve the
  /// threshold (RepeatsToResolve), when more than it has.
  std::optional<int> repeats_needed;
  bool significant() const;  ///< the interval excludes 1
};

/// Judges B against A. Each side is one variant's trials; its ok trials with measured steps are
/// its processes (at least one each, else std::invalid_argument). Trials shared by both sides
/// (a run that reused the other's results) measure nothing twice: inconclusive.
Ratio JudgeRatio(const std::vector<const store::RunTrial*>& a, const std::vector<const store::RunTrial*>& b,
                 const SpreadBook& book, double threshold);

/// The ok trials of `trials` with measured steps, one repeat each, in repeat order (then id).
std::vector<const store::RunTrial*> Processes(const std::vector<const store::RunTrial*>& trials);
/// Their measured steps, one Repeat per process.
std::vector<Repeat> RepeatsOf(const std::vector<const store::RunTrial*>& processes);
/// The median of `field` over the ok trials of `trials` that have it; empty when none has.
std::optional<double> MedianOfOk(const std::vector<const store::RunTrial*>& trials,
                                 std::optional<double> store::RunTrial::*field);

/// For people: "faster", "slower", "no change (below the 2% threshold)", "inconclusive (why)".
std::string VerdictText(const Ratio& ratio, double threshold);

}  // namespace runx::report
