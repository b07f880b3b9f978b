#include "machine/cpu_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "report/verdict.h"

namespace runx::engine {
namespace {

double Seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

}  // namespace

std::optional<double> MachineBusySeconds(const std::string& root) {
  std::ifstream in(root + "/proc/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice": guest time is already
  // counted in user (and guest_nice in nice), so it is not added again.
  std::istringstream fields(line);
  std::string name;
  fields >> name;
  if (name != "cpu") return std::nullopt;
  double v[8] = {};
  int n = 0;
  while (n < 8 && fields >> v[n]) ++n;
  if (n < 4) return std::nullopt;  // user, nice, system, idle at the least (iowait on: Linux 2.6)
  const double ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  const long per_s = sysconf(_SC_CLK_TCK);
  return ticks / static_cast<double>(per_s > 0 ? per_s : 100);
}

std::optional<CpuSample> SampleCpu(const std::string& root) {
  CpuSample s;
  s.at = std::chrono::steady_clock::now();
  const auto busy = MachineBusySeconds(root);
  if (!busy) return std::nullopt;
  s.busy_s = *busy;
  rusage self{};
  if (getrusage(RUSAGE_SELF, &self) != 0) return std::nullopt;
  s.self_s = Seconds(self.ru_utime) + Seconds(self.ru_stime);
  return s;
}

std::optional<CpuLoad> LoadBetween(const CpuSample& begin, const CpuSample& end, double cpus) {
  CpuLoad load;
  load.wall_s = std::chrono::duration<double>(end.at - begin.at).count();
  if (load.wall_s < kMinLoadSpanS) return std::nullopt;
  load.cpus = cpus;
  load.self_cpus = std::max(0.0, (end.self_s - begin.self_s) / load.wall_s);
  load.other_cpus = std::max(0.0, ((end.busy_s - begin.busy_s) - (end.self_s - begin.self_s)) / load.wall_s);
  return load;
}

double OnlineCpus() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<double>(n) : 1.0;
}

std::string DescribeQuiet(const CpuLoad& load, const std::string& load_average_1m) {
  const bool quiet = load.other_cpus < report::BusyLimit(load.cpus);
  std::string text = fmt::format("{}: other processes used {:.2f} of {:g} CPUs over {:.2g} s", quiet ? "yes" : "no",
                                 load.other_cpus, load.cpus, load.wall_s);
  if (!quiet)
    text += fmt::format(
        " ({:.2f} or more is busy); verdicts measured now are downgraded when the load differs "
        "between runs",
        report::BusyLimit(load.cpus));
  if (!load_average_1m.empty()) text += "; 1-minute load average " + load_average_1m;
  return text;
}

}  // namespace runx::engine
