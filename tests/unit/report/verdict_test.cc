// The rule behind every verdict (report/verdict.h): evidence across processes and runs, the load
// beside the trials, and, by simulation, the false-verdict rate and the power it promises.
#include "report/verdict.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

namespace runx::report {
namespace {

// A process of `config` in run `sweep`: 20 steps whose mean is `ms`, 64 samples each.
store::RunTrial Process(int64_t id, const std::string& config, const std::string& sweep, double ms,
                        std::optional<double> other_cpus = std::nullopt) {
  store::RunTrial t;
  t.trial_id = id;
  t.label = config;
  t.config_hash = config;
  t.env_hash = "env";
  t.host = "box";
  t.sweep = sweep;
  for (int i = 0; i < 20; ++i) t.measured_steps.emplace_back(ms * (1 + 0.002 * (i % 3 - 1)), 64.0);
  t.other_cpus = other_cpus;
  if (other_cpus) t.cpus = 2;
  return t;
}

std::vector<const store::RunTrial*> Ptrs(const std::vector<store::RunTrial>& v) {
  std::vector<const store::RunTrial*> out;
  for (const auto& t : v) out.push_back(&t);
  return out;
}

TEST(Verdict, ALoadThatDiffersBetweenTheSidesMakesAnyVerdictInconclusive) {
  // Three processes a side, clearly 20% apart; B measured beside other processes using 0.95 of 2
  // CPUs, A on a quiet machine.
  std::vector<store::RunTrial> a, b;
  for (int i = 0; i < 3; ++i) {
    a.push_back(Process(i, "c", "run-a", 10.0 + 0.01 * i, 0.02));
    b.push_back(Process(10 + i, "c", "run-b", 12.0 + 0.01 * i, 0.95));
  }
  const Ratio r = JudgeRatio(Ptrs(a), Ptrs(b), {}, 0.02);
  ASSERT_TRUE(r.interval);
  EXPECT_EQ(r.change, Change::kInconclusive);
  EXPECT_EQ(r.why,
            "load differed: other processes used 0.02 CPUs beside A, 0.95 beside B (of 2); measure both on a quiet "
            "machine");
  // Both busy alike: the verdict stands, with a caution.
  for (auto& t : a) t.other_cpus = 0.97;
  const Ratio busy = JudgeRatio(Ptrs(a), Ptrs(b), {}, 0.02);
  EXPECT_EQ(busy.change, Change::kSlower);
  EXPECT_EQ(busy.caution, "busy machine: other processes used 0.95 of 2 CPUs");
  // Both quiet: no caution.
  for (auto& t : a) t.other_cpus = 0.01;
  for (auto& t : b) t.other_cpus = 0.03;
  const Ratio quiet = JudgeRatio(Ptrs(a), Ptrs(b), {}, 0.02);
  EXPECT_EQ(quiet.change, Change::kSlower);
  EXPECT_EQ(quiet.caution, "");
  EXPECT_EQ(BusyLimit(1), 0.2);  // a tenth of the CPUs, at least a fifth of one
  EXPECT_EQ(BusyLimit(2), 0.2);
  EXPECT_EQ(BusyLimit(16), 1.6);
  EXPECT_EQ(BusyLimit(64), 6.4);
  EXPECT_EQ(BusyLimit(std::nullopt), 0.2);
}

// What a load does to a trial depends on the trial: beside one busy CPU of two, a trial that keeps
// one CPU busy loses nothing (the machine has room for both), a trial that wants both loses about
// a third of its CPU time, and one that mostly sleeps loses little of its time however busy the
// machine is. Only a difference in that cost beyond the threshold downgrades.
TEST(Verdict, ALoadThatTakesNoCpuTimeFromTheTrialsChangesNothing) {
  std::vector<store::RunTrial> a, b;
  for (int i = 0; i < 3; ++i) {
    a.push_back(Process(i, "c", "run-a", 10.0 + 0.01 * i, 0.02));
    b.push_back(Process(10 + i, "c", "run-b", 12.0 + 0.01 * i, 1.0));
  }
  for (auto* side : {&a, &b}) {
    for (auto& t : *side) t.trial_cpus = 1.0;
  }
  Ratio r = JudgeRatio(Ptrs(a), Ptrs(b), {}, 0.02);
  EXPECT_EQ(r.change, Change::kSlower);  // 1 + 1 CPUs on a machine of 2: nobody waited
  EXPECT_EQ(r.caution, "busy machine: other processes used 1.00 of 2 CPUs");
  EXPECT_EQ(LoadCost(r.load_b), 0.0);
  for (auto& t : b) t.trial_cpus = 2.0;  // now the trials want both CPUs: a third of it is taken
  r = JudgeRatio(Ptrs(a), Ptrs(b), {}, 0.02);
  EXPECT_NEAR(*LoadCost(r.load_b), 1.0 / 3, 1e-12);
  EXPECT_EQ(r.change, Change::kInconclusive);
  EXPECT_EQ(r.why,
            "load differed: other processes took an estimated 0% of A's time and 33% of B's (0.02 and 1.00 other "
            "CPUs beside trials using 1.00 and 2.00, of 2); measure both on a quiet machine");
  // Trials that mostly wait (0.1 CPUs) beside 2 busy CPUs: 5% of their CPU time, 0.5% of their time.
  for (auto& t : b) {
    t.trial_cpus = 0.1;
    t.other_cpus = 2.0;
  }
  r = JudgeRatio(Ptrs(a), Ptrs(b), {}, 0.02);
  EXPECT_NEAR(*LoadCost(r.load_b), (1 - 2 / 2.1) * 0.1, 1e-12);
  EXPECT_EQ(r.change, Change::kSlower);
}

TEST(Verdict, EarlierRunsCountOnlyInTheSameLoadClass) {
  std::vector<store::RunTrial> a = {Process(1, "c", "run-a", 10.0, 0.0)};
  std::vector<store::RunTrial> b = {Process(2, "c", "run-b", 10.5, 0.0)};
  std::vector<store::ProcessRate> busy_history;
  for (int i = 0; i < 4; ++i) {
    busy_history.push_back({100 + i, "c", "env", "box", "h" + std::to_string(i), 6400.0, 1.5, 2.0});
  }
  // The earlier runs were all busy: they say nothing of a quiet machine's spread.
  EXPECT_FALSE(JudgeRatio(Ptrs(a), Ptrs(b), SpreadBook(busy_history), 0.02).interval);
  for (auto& p : busy_history) p.other_cpus = 0.01;
  EXPECT_TRUE(JudgeRatio(Ptrs(a), Ptrs(b), SpreadBook(busy_history), 0.02).interval);
}

TEST(Verdict, RefusesSidesWithoutAProcess) {
  store::RunTrial failed = Process(1, "c", "r", 10);
  failed.status = TrialStatus::kOom;
  const std::vector<store::RunTrial> ok = {Process(2, "c", "r", 10)};
  EXPECT_THROW(JudgeRatio({&failed}, Ptrs(ok), {}, 0.02), std::invalid_argument);
}

// A history of runs of one configuration, as a user makes it by running an experiment again and
// again on one machine: each run's throughput moves by a run factor (what the machine was doing
// that hour: sd `run_sd`) and each process within it by a process factor (`process_sd`).
class Campaign {
 public:
  Campaign(double run_sd, double process_sd, uint64_t seed) : rng_(seed), run_(0, run_sd), process_(0, process_sd) {}
  /// A run of `processes` processes whose throughput is `factor` times the configuration's.
  std::vector<store::RunTrial> Run(int processes, double factor = 1.0) {
    const std::string sweep = "run" + std::to_string(runs_++);
    const double run = std::exp(run_(rng_));
    std::vector<store::RunTrial> out;
    for (int i = 0; i < processes; ++i) {
      out.push_back(Process(next_id_++, "c", sweep, 10.0 / (factor * run * std::exp(process_(rng_)))));
    }
    return out;
  }
  /// Adds a run's processes to the history later comparisons learn from.
  void Remember(const std::vector<store::RunTrial>& run) {
    for (const auto& t : run) {
      history_.push_back({t.trial_id, t.config_hash, t.env_hash, t.host, t.sweep, Throughput(RepeatsOf({&t})),
                          std::nullopt, std::nullopt});
    }
  }
  SpreadBook Book() const { return SpreadBook(history_); }

 private:
  std::mt19937_64 rng_;
  std::normal_distribution<double> run_, process_;
  std::vector<store::ProcessRate> history_;
  int runs_ = 0;
  int64_t next_id_ = 1;
};

// A/A: runs of the same thing, each compared with the one before as `runx compare previous
// latest` does, at the recommended repeats. Counts the comparisons that say faster or slower
// (all false), of those made once `known_runs` earlier runs are in the store.
int FalseVerdicts(double run_sd, double process_sd, size_t known_runs, int* made) {
  int false_verdicts = 0, judged = 0;
  *made = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    Campaign c(run_sd, process_sd, seed);
    std::vector<store::RunTrial> before = c.Run(kRecommendedRepeats);
    for (size_t k = 0; k < 12; ++k) {
      const std::vector<store::RunTrial> now = c.Run(kRecommendedRepeats);
      if (k >= known_runs) {
        const Ratio r = JudgeRatio(Ptrs(before), Ptrs(now), c.Book(), 0.02);
        ++*made;
        if (r.change == Change::kFaster || r.change == Change::kSlower) ++false_verdicts;
        if (r.interval) ++judged;
      }
      c.Remember(before);
      before = now;
    }
  }
  // A rule that never drew an interval would pass, and say nothing: most comparisons have one.
  EXPECT_GT(judged * 2, *made);
  return false_verdicts;
}

// Where processes vary more than runs (a quiet machine: 3% between processes, 1% between runs),
// every comparison keeps its promise, from the first one on.
TEST(VerdictCampaign, FalseVerdictsAtMostFivePercentFromTheFirstRun) {
  int made = 0;
  const int wrong = FalseVerdicts(0.01, 0.03, 0, &made);
  std::cout << "false verdicts: " << wrong << " of " << made << "\n";
  EXPECT_LE(wrong * 20, made) << wrong << " of " << made;
}

// Where runs vary more than their processes (3% between runs, 2% between processes: the load of
// the hour), a comparison knows it once earlier runs of the configuration tell how much runs
// differ (two of them: kMinSpreadDf).
TEST(VerdictCampaign, FalseVerdictsAtMostFivePercentOnceRunsAreKnown) {
  int made = 0;
  const int wrong = FalseVerdicts(0.03, 0.02, 3, &made);
  std::cout << "false verdicts: " << wrong << " of " << made << "\n";
  EXPECT_LE(wrong * 20, made) << wrong << " of " << made;
}

// Known effect: the newest run is `slowdown` slower, after `earlier` runs of the configuration.
// Returns how many of 100 such regressions are found (none may be called faster).
int Found(double run_sd, double process_sd, int earlier, double slowdown) {
  int found = 0;
  for (uint64_t seed = 100; seed < 200; ++seed) {
    Campaign c(run_sd, process_sd, seed);
    for (int k = 0; k < earlier; ++k) c.Remember(c.Run(kRecommendedRepeats));
    const std::vector<store::RunTrial> before = c.Run(kRecommendedRepeats);
    const std::vector<store::RunTrial> slow = c.Run(kRecommendedRepeats, 1 / slowdown);
    const Ratio r = JudgeRatio(Ptrs(before), Ptrs(slow), c.Book(), 0.02);
    if (r.change == Change::kSlower) ++found;
    EXPECT_NE(r.change, Change::kFaster);
  }
  return found;
}

// On a quiet machine (processes 3% apart, runs 1%), a 15% regression between two runs of 3
// repeats is found at least 9 times in 10, without any earlier run.
TEST(VerdictCampaign, AFifteenPercentSlowdownIsFoundNineTimesInTen) {
  const int found = Found(0.01, 0.03, 0, 1.15);
  std::cout << "found: " << found << " of 100\n";
  EXPECT_GE(found, 90);
}

// Where runs move by 3%, five earlier runs tell it; a 30% regression is found 9 times in 10, while
// a 3% one (within what runs do) is not called a regression more than the false-verdict rate.
TEST(VerdictCampaign, WhereRunsMoveEarlierRunsTellWhatIsARegression) {
  const int big = Found(0.03, 0.02, 5, 1.30), small = Found(0.03, 0.02, 5, 1.03);
  std::cout << "found: " << big << " of 100 (30%), " << small << " of 100 (3%)\n";
  EXPECT_GE(big, 90);
  EXPECT_LE(small, 10);
}

// Within one run (the end-of-run table), a variant is compared with its baseline in the same run:
// the run's factor is shared, and processes alone decide.
TEST(VerdictCampaign, WithinARunTheProcessesDecide) {
  int verdicts = 0, false_verdicts = 0, found = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> process(0, 0.02);
    const double run = std::exp(std::normal_distribution<double>(0, 0.05)(rng));  // shared by both
    std::vector<store::RunTrial> base, same, slower;
    for (int i = 0; i < kRecommendedRepeats; ++i) {
      base.push_back(Process(10 * i + 1, "base", "run", 10.0 / (run * std::exp(process(rng)))));
      same.push_back(Process(10 * i + 2, "same", "run", 10.0 / (run * std::exp(process(rng)))));
      slower.push_back(Process(10 * i + 3, "slow", "run", 11.5 / (run * std::exp(process(rng)))));
    }
    const Ratio aa = JudgeRatio(Ptrs(base), Ptrs(same), {}, 0.02);
    EXPECT_TRUE(aa.same_run);
    ++verdicts;
    if (aa.change == Change::kFaster || aa.change == Change::kSlower) ++false_verdicts;
    if (JudgeRatio(Ptrs(base), Ptrs(slower), {}, 0.02).change == Change::kSlower) ++found;
  }
  EXPECT_LE(false_verdicts, verdicts / 20) << false_verdicts;
  EXPECT_GE(found * 10, verdicts * 9) << found;
}

}  // namespace
}  // namespace runx::report
