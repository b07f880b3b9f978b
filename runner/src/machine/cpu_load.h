#pragma once
// How busy other processes kept the machine's CPUs while this process measured: the trial's
// metrics noise.other_cpus and noise.cpus, and `runx doctor`'s "quiet to measure" row. A timing
// taken while something else computes is slower by an amount nobody can name afterwards; this is
// what lets a verdict say it was measured on a busy machine. Linux (/proc/stat); no LibTorch.
#include <chrono>
#include <optional>
#include <string>

namespace runx::engine {

/// One reading, taken at both ends of the span to judge.
struct CpuSample {
  std::chrono::steady_clock::time_point at;
  double busy_s = 0;  ///< non-idle CPU time of the whole machine since boot (/proc/stat's "cpu" line)
  double self_s = 0;  ///< CPU time of this process, every thread (getrusage RUSAGE_SELF)
};

/// Reads the machine's non-idle CPU time from `root`/proc/stat ("" for the real /; tests pass a
/// fake tree): user + nice + system + irq + softirq + steal of the aggregate "cpu" line, in
/// seconds (_SC_CLK_TCK ticks); idle and iowait are idle. nullopt where it cannot be read.
std::optional<double> MachineBusySeconds(const std::string& root = "");

/// Now: the clock, MachineBusySeconds(root) and this process's CPU time; nullopt where /proc/stat
/// cannot be read (not Linux, or a sandbox that hides it).
std::optional<CpuSample> SampleCpu(const std::string& root = "");

/// What other processes did between two samples.
struct CpuLoad {
  double other_cpus = 0;  ///< max(0, (busy - self) / wall): the CPUs others kept busy, on average
  double cpus = 0;        ///< the CPUs online
  double wall_s = 0;      ///< how long the span lasted
  double self_cpus = 0;   ///< this process's CPU time over the wall time: the CPUs it kept busy
};

/// The shortest span LoadBetween judges: /proc/stat counts CPU time in units of 10 ms
/// (_SC_CLK_TCK), and over 50 ms one unit is 0.2 CPUs, the smallest busy limit (report::BusyLimit): over
/// a shorter span the rounding alone could make a quiet machine look busy. (On a 2-CPU machine
/// kept busy by a build, the figure's standard deviation was 0.03 CPUs over 100 ms spans, 0.3
/// over 20 ms, 0.007 over 1 s.)
inline constexpr double kMinLoadSpanS = 0.05;

/// The load between `begin` and `end` on a machine of `cpus` CPUs; nullopt when the span is
/// shorter than kMinLoadSpanS. Every other process counts: a data-parallel trial's sibling ranks
/// too, and the runx parent that waits for the trial (it sleeps, so it adds next to nothing).
std::optional<CpuLoad> LoadBetween(const CpuSample& begin, const CpuSample& end, double cpus);

/// The CPUs online (sysconf(_SC_NPROCESSORS_ONLN)), at least 1.
double OnlineCpus();

/// `runx doctor`'s answer, by the rule of runx's verdicts (report::BusyLimit), to whether the
/// machine is quiet enough to measure now, from the load
/// of a span in which runx did nothing and the 1-minute load average ("" when unknown), e.g.
/// "yes: other processes used 0.03 of 2 CPUs over 1 s; 1-minute load average 0.52".
std::string DescribeQuiet(const CpuLoad& load, const std::string& load_average_1m);

}  // namespace runx::engine
