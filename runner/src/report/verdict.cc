#include "report/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace runx::report {
namespace {

std::string Percent(double fraction) { return fmt::format("{:g}%", fraction * 100); }

std::string Cpus(double v) { return fmt::format("{:.2f}", v); }

std::optional<double> MedianOf(const std::vector<const store::RunTrial*>& trials,
                               std::optional<double> store::RunTrial::*field) {
  std::vector<double> values;
  for (const store::RunTrial* t : trials) {
    if (t->*field) values.push_back(*(t->*field));
  }
  if (values.empty()) return std::nullopt;
  return Median(std::move(values));
}

Load LoadOf(const std::vector<const store::RunTrial*>& processes) {
  return {MedianOf(processes, &store::RunTrial::other_cpus), MedianOf(processes, &store::RunTrial::cpus),
          MedianOf(processes, &store::RunTrial::trial_cpus)};
}

std::string Share(double share) { return fmt::format("{:.0f}%", share * 100); }

bool BusyRate(const store::ProcessRate& p) { return p.other_cpus && *p.other_cpus >= BusyLimit(p.cpus); }

// Load differed: a side ran on a busy machine, and the other processes may explain more than the
// threshold: they took shares of the trials' CPU time that differ by more than it, or (where the
// trials' own CPU use is not recorded) used CPUs that differ by a busy limit.
std::optional<std::string> LoadDiffered(const Load& a, const Load& b, double threshold) {
  if (!Busy(a) && !Busy(b)) return std::nullopt;
  const auto cost_a = LoadCost(a), cost_b = LoadCost(b);
  if (cost_a && cost_b) {
    if (std::fabs(*cost_a - *cost_b) <= threshold) return std::nullopt;
    return fmt::format(
        "load differed: other processes took an estimated {} of A's time and {} of B's ({} and {} "
        "other CPUs beside trials using {} and {}, of {:g})",
        Share(*cost_a), Share(*cost_b), Cpus(*a.other_cpus), Cpus(*b.other_cpus), Cpus(*a.trial_cpus),
        Cpus(*b.trial_cpus), std::max(a.cpus.value_or(0), b.cpus.value_or(0)));
  }
  if (!a.other_cpus || !b.other_cpus) {
    return fmt::format("load differed: {} {}, the other side's load is not recorded", Busy(a) ? "A's" : "B's",
                       DescribeLoad(Busy(a) ? a : b));
  }
  const double limit = BusyLimit(std::max(a.cpus.value_or(1), b.cpus.value_or(1)));
  if (std::fabs(*a.other_cpus - *b.other_cpus) < limit) return std::nullopt;
  return fmt::format("load differed: other processes used {} CPUs beside A, {} beside B (of {})", Cpus(*a.other_cpus),
                     Cpus(*b.other_cpus), fmt::format("{:g}", std::max(a.cpus.value_or(0), b.cpus.value_or(0))));
}

std::string UnknownSpread(const Ratio& r) {
  const std::string sides = r.processes_a == 1 && r.processes_b == 1
                                ? std::string("1 process each")
                                : fmt::format("{} and {} processes", r.processes_a, r.processes_b);
  return fmt::format("{}: run-to-run spread unknown; repeats: {} would measure it", sides, kRecommendedRepeats);
}

}  // namespace

const char* ChangeName(Change change) {
  switch (change) {
    case Change::kFaster:
      return "faster";
    case Change::kSlower:
      return "slower";
    case Change::kNoChange:
      return "no change";
    case Change::kInconclusive:
      return "inconclusive";
  }
  return "";
}

Change JudgeInterval(const RatioInterval& interval, double threshold) {
  if (interval.low > 1 + threshold) return Change::kFaster;
  if (interval.high < 1 - threshold) return Change::kSlower;
  if (interval.low >= 1 - threshold && interval.high <= 1 + threshold) return Change::kNoChange;
  return Change::kInconclusive;
}

double BusyLimit(std::optional<double> cpus) { return std::max(0.2, 0.1 * cpus.value_or(1)); }

std::optional<double> LoadCost(const Load& load) {
  if (!load.other_cpus || !load.cpus || !load.trial_cpus) return std::nullopt;
  const double demand = *load.other_cpus + *load.trial_cpus;
  if (!(demand > *load.cpus)) return 0.0;
  return (1 - *load.cpus / demand) * std::min(1.0, *load.trial_cpus);
}

bool Busy(const Load& load) { return load.other_cpus && *load.other_cpus >= BusyLimit(load.cpus); }

std::string DescribeLoad(const Load& load) {
  if (!load.other_cpus) return "load not recorded";
  if (!load.cpus) return fmt::format("other processes used {} CPUs", Cpus(*load.other_cpus));
  return fmt::format("other processes used {} of {:g} CPUs", Cpus(*load.other_cpus), *load.cpus);
}

SpreadBook SpreadBook::Read(store::Store& store, const std::vector<store::RunTrial>& trials) {
  std::vector<std::string> configs;
  for (const store::RunTrial& t : trials) {
    if (!t.config_hash.empty()) configs.push_back(t.config_hash);
  }
  std::sort(configs.begin(), configs.end());
  configs.erase(std::unique(configs.begin(), configs.end()), configs.end());
  return SpreadBook(store::ReadProcessRates(store, configs));
}

SpreadEvidence SpreadBook::For(const std::vector<const store::RunTrial*>& a,
                               const std::vector<const store::RunTrial*>& b, bool busy) const {
  // A process: its configuration, environment, host and run, and ln of its throughput.
  struct Process {
    std::string config, env, host, sweep;
    double log_rate = 0;
  };
  std::vector<Process> processes;
  std::set<int64_t> own;
  std::set<std::string> configs, hosts, own_sweeps;
  for (const auto* side : {&a, &b}) {
    for (const store::RunTrial* t : *side) {
      if (!own.insert(t->trial_id).second) continue;
      // A trial migrated without a config identity groups with its own side's, by label.
      const std::string config = t->config_hash.empty() ? "label:" + t->label : t->config_hash;
      configs.insert(config);
      hosts.insert(t->host);
      own_sweeps.insert(t->sweep);
      processes.push_back({config, t->env_hash, t->host, t->sweep, std::log(Throughput(RepeatsOf({t})))});
    }
  }
  for (const store::ProcessRate& p : rates_) {
    if (own.count(p.trial_id) || !configs.count(p.config_hash) || !hosts.count(p.host) || BusyRate(p) != busy) {
      continue;
    }
    processes.push_back({p.config_hash, p.env_hash, p.host, p.sweep, std::log(p.samples_per_s)});
  }
  // Within: each run's processes of one configuration, environment and host about their mean.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<std::pair<Key, std::string>, std::vector<double>> runs;
  for (const Process& p : processes) runs[{{p.config, p.env, p.host}, p.sweep}].push_back(p.log_rate);
  std::vector<std::vector<double>> within;
  for (const auto& [key, logs] : runs) within.push_back(logs);
  // Between: the means of the other runs of each configuration, environment and host.
  std::map<Key, std::vector<double>> means;
  double inverse_sizes = 0;
  int counted = 0;
  for (const auto& [key, logs] : runs) {
    if (own_sweeps.count(key.second)) continue;
    double mean = 0;
    for (const double l : logs) mean += l / static_cast<double>(logs.size());
    means[key.first].push_back(mean);
    inverse_sizes += 1.0 / static_cast<double>(logs.size());
    ++counted;
  }
  std::vector<std::vector<double>> between;
  for (const auto& [key, m] : means) between.push_back(m);
  SpreadEvidence e;
  e.within = PoolLogSpread(within);
  e.between = PoolLogSpread(between);
  e.processes_per_run = counted > 0 ? counted / inverse_sizes : 1;
  return e;
}

bool Ratio::significant() const { return interval && (interval->low > 1 || interval->high < 1); }

std::vector<const store::RunTrial*> Processes(const std::vector<const store::RunTrial*>& trials) {
  std::vector<const store::RunTrial*> out;
  for (const store::RunTrial* t : trials) {
    if (t->status == TrialStatus::kOk && !t->measured_steps.empty()) out.push_back(t);
  }
  std::stable_sort(out.begin(), out.end(), [](const store::RunTrial* x, const store::RunTrial* y) {
    return std::tie(x->repeat_index, x->trial_id) < std::tie(y->repeat_index, y->trial_id);
  });
  return out;
}

std::optional<double> MedianOfOk(const std::vector<const store::RunTrial*>& trials,
                                 std::optional<double> store::RunTrial::*field) {
  std::vector<double> values;
  for (const store::RunTrial* t : trials)
    if (t->status == TrialStatus::kOk && t->*field) values.push_back(*(t->*field));
  if (values.empty()) return std::nullopt;
  return Median(std::move(values));
}

std::vector<Repeat> RepeatsOf(const std::vector<const store::RunTrial*>& processes) {
  std::vector<Repeat> out;
  for (const store::RunTrial* t : processes) {
    Repeat r;
    for (const auto& [wall_ms, samples] : t->measured_steps) r.push_back({wall_ms, samples});
    out.push_back(std::move(r));
  }
  return out;
}

Ratio JudgeRatio(const std::vector<const store::RunTrial*>& a, const std::vector<const store::RunTrial*>& b,
                 const SpreadBook& book, double threshold) {
  const std::vector<const store::RunTrial*> pa = Processes(a);
  const std::vector<const store::RunTrial*> pb = Processes(b);
  if (pa.empty() || pb.empty()) throw std::invalid_argument("a ratio needs a measured process on each side");
  Ratio r;
  r.processes_a = static_cast<int>(pa.size());
  r.processes_b = static_cast<int>(pb.size());
  const double base = Throughput(RepeatsOf(pa));
  if (!(base > 0)) throw std::invalid_argument("a ratio over a side that processed no samples");
  r.estimate = Throughput(RepeatsOf(pb)) / base;
  r.load_a = LoadOf(pa);
  r.load_b = LoadOf(pb);

  std::set<int64_t> ids_a, ids_b;
  for (const store::RunTrial* t : pa) ids_a.insert(t->trial_id);
  for (const store::RunTrial* t : pb) ids_b.insert(t->trial_id);
  if (ids_a == ids_b) {
    r.why = "the same trials: one run reused the other's results; --force measures again";
    return r;
  }
  const bool busy = Busy(r.load_a) || Busy(r.load_b);
  std::set<std::string> sweeps_a, sweeps_b;
  for (const store::RunTrial* t : pa) sweeps_a.insert(t->sweep);
  for (const store::RunTrial* t : pb) sweeps_b.insert(t->sweep);
  r.same_run = sweeps_a.size() == 1 && sweeps_a == sweeps_b;
  r.evidence = book.For(pa, pb, busy);
  r.error = ErrorOfLogRatio(r.evidence, r.processes_a, r.processes_b, r.same_run);
  r.interval = IntervalOfRatio(r.estimate, r.error);
  if (!r.interval) {
    r.why = UnknownSpread(r);
    return r;
  }
  r.change = JudgeInterval(*r.interval, threshold);
  if (r.change == Change::kInconclusive) {
    r.why = fmt::format("the interval reaches beyond ±{}", Percent(threshold));
    const auto needed = RepeatsToResolve(r.evidence, r.same_run, threshold);
    if (needed && *needed > std::min(r.processes_a, r.processes_b)) r.repeats_needed = needed;
    return r;
  }
  if (const auto differed = LoadDiffered(r.load_a, r.load_b, threshold)) {
    r.why = fmt::format("{}; measure both on a quiet machine", *differed);
    r.change = Change::kInconclusive;
    return r;
  }
  if (busy) {
    const Load& load = Busy(r.load_b) ? r.load_b : r.load_a;
    r.caution = "busy machine: " + DescribeLoad(load);
    const auto cost = LoadCost(load);
    if (cost && *cost > 0) r.caution += fmt::format(" (an estimated {} of the trials' time)", Share(*cost));
  }
  return r;
}

std::string VerdictText(const Ratio& ratio, double threshold) {
  switch (ratio.change) {
    case Change::kNoChange:
      return fmt::format("no change (below the {} threshold)", Percent(threshold));
    case Change::kInconclusive:
      return fmt::format("inconclusive ({})", ratio.why);
    default:
      return ChangeName(ratio.change);
  }
}

}  // namespace runx::report
