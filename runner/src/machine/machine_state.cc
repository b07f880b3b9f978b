#include "machine/machine_state.h"

#include "base/files.h"
#include "machine/nvml.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <vector>

namespace runx::engine {
namespace {

// "cpu0".."cpuN" with a cpufreq governor, in CPU order.
std::vector<std::pair<int, std::string>> Governors(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<std::pair<int, std::string>> out;
  std::error_code ec;
  const fs::path cpus = fs::path(root + "/sys/devices/system/cpu");
  for (fs::directory_iterator it(cpus, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 ||
        !std::all_of(name.begin() + 3, name.end(), [](unsigned char c) { return std::isdigit(c); })) {
      continue;
    }
    const std::string governor = base::ReadFirstLine((it->path() / "cpufreq" / "scaling_governor").string());
    if (!governor.empty()) out.emplace_back(std::stoi(name.substr(3)), governor);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "powersave (cpu0-3), performance (cpu4-7)"; one governor alone is named alone.
std::string DescribeGovernors(const std::vector<std::pair<int, std::string>>& governors) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const auto& [cpu, governor] : governors) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == governor; });
    if (it == groups.end()) {
      groups.push_back({governor, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(cpu);
  }
  if (groups.size() == 1) return groups[0].first;
  std::vector<std::string> parts;
  for (const auto& [governor, cpus] : groups) {
    std::vector<std::string> ranges;
    for (size_t i = 0; i < cpus.size();) {
      size_t j = i;
      while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
      ranges.push_back(i == j ? fmt::format("cpu{}", cpus[i]) : fmt::format("cpu{}-{}", cpus[i], cpus[j]));
      i = j + 1;
    }
    parts.push_back(fmt::format("{} ({})", governor, fmt::join(ranges, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// "0.52 0.48 0.40": the three load averages of /proc/loadavg ("0.52 0.48 0.40 1/123 4567"); "" when
// unreadable.
std::string LoadAverage(const std::string& root) {
  const std::string loadavg = base::ReadFirstLine(root + "/proc/loadavg");
  std::vector<std::string> fields;
  size_t pos = 0;
  while (fields.size() < 3 && pos < loadavg.size()) {
    const size_t end = std::min(loadavg.find(' ', pos), loadavg.size());
    if (end > pos) fields.push_back(loadavg.substr(pos, end - pos));
    pos = end + 1;
  }
  return fields.size() == 3 ? fmt::format("{}", fmt::join(fields, " ")) : "";
}

// The mean current frequency of the CPUs in MHz (cpufreq's scaling_cur_freq, kHz); nullopt when no
// CPU shows one.
std::optional<double> MeanCpuMhz(const std::string& root) {
  namespace fs = std::filesystem;
  double sum = 0;
  int n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(root + "/sys/devices/system/cpu"), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string khz = base::ReadFirstLine((it->path() / "cpufreq" / "scaling_cur_freq").string());
    if (khz.empty() || khz.find_first_not_of("0123456789") != std::string::npos) continue;
    sum += std::stod(khz) / 1000;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

// The keys of a GPU's moving state, each ending in `suffix`.
void DescribeGpuMoment(const NvmlGpu& g, const std::string& suffix, std::map<std::string, std::string>& env) {
  const std::string key = fmt::format("noise.gpu{}_", g.index);
  if (g.sm_clock_mhz) env[key + "sm_clock_mhz" + suffix] = std::to_string(*g.sm_clock_mhz);
  if (g.temperature_c) env[key + "temperature_c" + suffix] = std::to_string(*g.temperature_c);
  if (g.utilization_pct) env[key + "utilization" + suffix] = fmt::format("{}%", *g.utilization_pct);
  if (g.throttle_reasons) env[key + "throttle" + suffix] = DescribeThrottleReasons(*g.throttle_reasons);
  if (g.compute_processes) env[key + "processes" + suffix] = std::to_string(*g.compute_processes);
}

}  // namespace

std::map<std::string, std::string> CpuNoiseState(const std::string& root) {
  std::map<std::string, std::string> env;
  const auto governors = Governors(root);
  if (!governors.empty()) env["noise.cpu_governor"] = DescribeGovernors(governors);
  const std::string boost = base::ReadFirstLine(root + "/sys/devices/system/cpu/cpufreq/boost");
  const std::string no_turbo = base::ReadFirstLine(root + "/sys/devices/system/cpu/intel_pstate/no_turbo");
  if (!boost.empty()) {
    env["noise.cpu_boost"] = boost == "1" ? "on" : "off";
  } else if (!no_turbo.empty()) {
    env["noise.cpu_boost"] = no_turbo == "1" ? "off" : "on";
  }
  if (const std::string load = LoadAverage(root); !load.empty()) env["noise.load_average"] = load;
  return env;
}

std::map<std::string, std::string> DescribeGpuNoise(const NvmlSnapshot& snapshot) {
  std::map<std::string, std::string> env;
  if (!snapshot.driver_version.empty()) {
    env["noise.gpu_driver"] = snapshot.driver_version;
    if (const auto cuda = snapshot.cuda_driver_version)
      env["noise.gpu_driver"] += fmt::format(" (CUDA {}.{})", *cuda / 1000, *cuda % 1000 / 10);
  }
  const auto clocks = [](const std::optional<unsigned>& sm, const std::optional<unsigned>& mem) {
    std::vector<std::string> parts;
    if (sm) parts.push_back(fmt::format("sm {}", *sm));
    if (mem) parts.push_back(fmt::format("mem {}", *mem));
    return fmt::format("{}", fmt::join(parts, ", "));
  };
  for (const NvmlGpu& g : snapshot.gpus) {
    const std::string key = fmt::format("noise.gpu{}_", g.index);
    if (const std::string max = clocks(g.max_sm_clock_mhz, g.max_mem_clock_mhz); !max.empty())
      env[key + "max_clocks_mhz"] = max;
    if (const std::string app = clocks(g.app_sm_clock_mhz, g.app_mem_clock_mhz); !app.empty())
      env[key + "application_clocks_mhz"] = app;
    if (g.power_limit_w) env[key + "power_limit_w"] = fmt::format("{:g}", *g.power_limit_w);
    if (g.persistence) env[key + "persistence"] = *g.persistence ? "on" : "off";
    if (g.compute_mode) env[key + "compute_mode"] = *g.compute_mode;
    DescribeGpuMoment(g, "_at_start", env);
  }
  return env;
}

std::map<std::string, std::string> GpuNoiseState() {
  const auto snapshot = ReadNvml();
  return snapshot ? DescribeGpuNoise(*snapshot) : std::map<std::string, std::string>{};
}

std::map<std::string, std::string> NoiseStateAfterMeasuring(const std::string& root, const std::string& nvml) {
  std::map<std::string, std::string> env;
  if (const std::string load = LoadAverage(root); !load.empty()) env["noise.load_average_after"] = load;
  if (const auto mhz = MeanCpuMhz(root)) env["noise.cpu_mhz_after"] = fmt::format("{:.0f}", *mhz);
  if (const auto snapshot = ReadNvml(nvml)) {
    for (const NvmlGpu& g : snapshot->gpus) DescribeGpuMoment(g, "_after", env);
  }
  return env;
}

std::map<std::string, std::string> NoiseState() {
  auto env = CpuNoiseState();
  env.merge(GpuNoiseState());
  return env;
}

}  // namespace runx::engine
