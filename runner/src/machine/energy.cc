#include "machine/energy.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/files.h"
#include "machine/nvml.h"

namespace runx::engine {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsBetween(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// The number in `file`, or why not: strerror's words (EINVAL's for a file that holds no number).
std::pair<std::optional<double>, std::string> ReadNumber(const std::string& file) {
  std::string error;
  const auto text = base::ReadFile(file, &error);
  if (!text) return {std::nullopt, error};
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (end == text->c_str()) return {std::nullopt, std::strerror(EINVAL)};
  return {v, ""};
}

std::string TooShort(double seconds, double min_s) {
  return fmt::format("the measured steps lasted {:.2f} s, under the {:g} s a reading needs", seconds, min_s);
}

// Reads a value through a span: once at Start, then on a thread every poll_ms, and once at Stop.
// A failed read (nullopt) ends the span's evidence: Stop then says why.
class PolledMeter : public EnergyMeter {
 public:
  struct Sample {
    Clock::time_point at;
    double value = 0;
  };

  PolledMeter(std::function<std::optional<double>()> read, std::string source, const EnergyOptions& options)
      : read_(std::move(read)), source_(std::move(source)), options_(options) {}
  ~PolledMeter() override { Join(); }
  std::string source() const override { return source_; }

  void Start() override {
    Join();
    samples_.clear();
    failed_ = false;
    stop_ = false;
    Take();
    thread_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      const auto period = std::chrono::duration<double, std::milli>(options_.poll_ms);
      while (!cv_.wait_for(lock, period, [this] { return stop_; })) {
        lock.unlock();
        const auto v = read_();
        const auto at = Clock::now();
        lock.lock();
        Add(at, v);
      }
    });
  }

  EnergyReading Stop() override {
    if (!thread_.joinable()) return {std::nullopt, "the meter was not started"};
    Join();
    Take();
    if (failed_) return {std::nullopt, fmt::format("{} stopped answering during the measured steps", what())};
    const double seconds = SecondsBetween(samples_.front().at, samples_.back().at);
    if (seconds < options_.min_cover_s) return {std::nullopt, TooShort(seconds, options_.min_cover_s)};
    return Conclude(samples_, seconds);
  }

 protected:
  virtual std::string what() const = 0;
  /// The energy of the span from its samples (at least two, `seconds` apart end to end).
  virtual EnergyReading Conclude(const std::vector<Sample>& samples, double seconds) const = 0;
  const EnergyOptions& options() const { return options_; }

 private:
  void Take() {
    const auto v = read_();
    const auto at = Clock::now();
    std::lock_guard lock(mutex_);
    Add(at, v);
  }
  void Add(Clock::time_point at, const std::optional<double>& v) {
    if (!v) {
      failed_ = true;
      return;
    }
    samples_.push_back({at, *v});
  }
  void Join() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  std::function<std::optional<double>()> read_;
  std::string source_;
  EnergyOptions options_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = true;
  bool failed_ = false;
  std::vector<Sample> samples_;
  std::thread thread_;
};

// A cumulative counter that moves in steps (NVML's, in millijoules). The power between the first
// and the last step seen in the span, times the span: each step is seen within a poll of when it
// happened, and those between span ends and the nearest step cost nothing.
class CounterMeter : public PolledMeter {
 public:
  using PolledMeter::PolledMeter;  // reads millijoules

 protected:
  std::string what() const override { return "the GPU's energy counter"; }
  EnergyReading Conclude(const std::vector<Sample>& samples, double seconds) const override {
    std::optional<Sample> first, last;
    int steps = 0;
    for (size_t i = 1; i < samples.size(); ++i) {
      if (samples[i].value < samples[i - 1].value) return {std::nullopt, "the GPU's energy counter went backwards"};
      if (samples[i].value == samples[i - 1].value) continue;
      ++steps;
      if (!first) first = samples[i];
      last = samples[i];
    }
    const double cover = first ? SecondsBetween(first->at, last->at) : 0;
    if (cover < options().min_cover_s)
      return {std::nullopt,
              fmt::format("the GPU's energy counter moved {} times {:.2f} s apart in the {:.2f} s of measured steps, "
                          "under the {:g} s a reading needs",
                          steps, cover, seconds, options().min_cover_s)};
    const double watts = (last->value - first->value) / 1000.0 / cover;
    return {EnergySpan{watts * seconds, seconds}, ""};
  }
};

// A power draw (NVML's, in milliwatts), integrated over the span by the trapezoid rule.
class PowerMeter : public PolledMeter {
 public:
  using PolledMeter::PolledMeter;  // reads milliwatts

 protected:
  std::string what() const override { return "the GPU's power reading"; }
  EnergyReading Conclude(const std::vector<Sample>& samples, double seconds) const override {
    double joules = 0;
    for (size_t i = 1; i < samples.size(); ++i)
      joules += (samples[i].value + samples[i - 1].value) / 2000.0 * SecondsBetween(samples[i - 1].at, samples[i].at);
    return {EnergySpan{joules, seconds}, ""};
  }
};

// The RAPL package zones: read at both ends (they count in microjoules, updated about every
// millisecond), each zone's wrap-around undone once.
class RaplMeter : public EnergyMeter {
 public:
  struct Zone {
    std::string energy_path;
    double range_uj = 0;
  };
  RaplMeter(std::vector<Zone> zones, std::string source, const EnergyOptions& options)
      : zones_(std::move(zones)), source_(std::move(source)), options_(options) {}
  std::string source() const override { return source_; }

  void Start() override {
    start_at_ = Clock::now();
    start_ = ReadAll();
  }

  EnergyReading Stop() override {
    const auto end = ReadAll();
    const double seconds = SecondsBetween(start_at_, Clock::now());
    if (start_.size() != zones_.size() || end.size() != zones_.size())
      return {std::nullopt, "a RAPL counter could not be read during the measured steps"};
    if (seconds < options_.min_cover_s) return {std::nullopt, TooShort(seconds, options_.min_cover_s)};
    double uj = 0;
    for (size_t i = 0; i < zones_.size(); ++i)
      uj += end[i] >= start_[i] ? end[i] - start_[i] : end[i] + zones_[i].range_uj - start_[i];
    return {EnergySpan{uj / 1e6, seconds}, ""};
  }

 private:
  std::vector<double> ReadAll() const {
    std::vector<double> out;
    for (const Zone& z : zones_) {
      const auto v = ReadNumber(z.energy_path).first;
      if (!v) return {};
      out.push_back(*v);
    }
    return out;
  }

  std::vector<Zone> zones_;
  std::string source_;
  EnergyOptions options_;
  Clock::time_point start_at_;
  std::vector<double> start_;
};

}  // namespace

EnergySwitch ReadEnergySwitch() {
  const char* value = std::getenv("RUNX_ENERGY");
  if (value == nullptr || *value == '\0' || std::string(value) == "on") return {true, ""};
  if (std::string(value) == "off") return {false, ""};
  return {true, fmt::format("RUNX_ENERGY='{}': expected 'off' (no energy meter) or 'on' (the default)", value)};
}

EnergyMeterOrWhy OpenGpuEnergyMeter(const std::string& pci_bus_id, const EnergyOptions& options,
                                    const std::string& nvml_library) {
  std::shared_ptr<NvmlSession> nvml = NvmlSession::Open(nvml_library);
  if (!nvml) return {nullptr, fmt::format("NVML ({}) could not be loaded or initialised", nvml_library)};
  const NvmlSession::Device gpu = nvml->ByPciBusId(pci_bus_id);
  if (gpu == nullptr) return {nullptr, fmt::format("NVML knows no GPU at PCI bus id {}", pci_bus_id)};
  const std::string name = fmt::format("{} ({})", nvml->Name(gpu), pci_bus_id);
  if (nvml->TotalEnergyMj(gpu)) {
    auto read = [nvml, gpu]() -> std::optional<double> {
      const auto mj = nvml->TotalEnergyMj(gpu);
      return mj ? std::optional<double>(static_cast<double>(*mj)) : std::nullopt;
    };
    return {std::make_unique<CounterMeter>(read, "nvml energy counter: " + name, options), ""};
  }
  if (nvml->PowerMw(gpu)) {
    auto read = [nvml, gpu]() -> std::optional<double> {
      const auto mw = nvml->PowerMw(gpu);
      return mw ? std::optional<double>(*mw) : std::nullopt;
    };
    return {std::make_unique<PowerMeter>(read, fmt::format("nvml power draw every {:g} ms: {}", options.poll_ms, name),
                                         options),
            ""};
  }
  return {nullptr, fmt::format("NVML gives neither an energy counter nor a power draw for {}", name)};
}

EnergyMeterOrWhy OpenCpuEnergyMeter(const std::string& root, const EnergyOptions& options) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(root.empty() ? "/" : root) / "sys/class/powercap";
  std::vector<RaplMeter::Zone> zones;
  std::vector<std::string> names;
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& zone : entries) {
    const std::string name = base::ReadFirstLine((zone / "name").string());
    if (name.rfind("package-", 0) != 0) continue;
    const fs::path energy = zone / "energy_uj";
    if (const auto [value, error] = ReadNumber(energy.string()); !value) {
      return {nullptr,
              fmt::format("the RAPL counter {} cannot be read: {}{}", energy.string(), error,
                          error == std::strerror(EACCES) ? " (Linux 5.10 and newer let only root read it)" : "")};
    }
    zones.push_back({energy.string(), ReadNumber((zone / "max_energy_range_uj").string()).first.value_or(0)});
    names.push_back(name);
  }
  if (zones.empty())
    return {nullptr, fmt::format("no RAPL counters: {} has no package zone (a CPU without RAPL, or a virtual "
                                 "machine that does not pass it through)",
                                 dir.string())};
  return {std::make_unique<RaplMeter>(std::move(zones), fmt::format("rapl: {}", fmt::join(names, " + ")), options), ""};
}

}  // namespace runx::engine
