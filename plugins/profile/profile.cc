// profile: LibTorch's profiler (Kineto: CPU ops, and CUDA kernels through CUPTI where LibTorch has
// them) around a few steps of the trial. It answers "where does a step's time go" in the store: the
// device time of each kernel per step, the device's busy time against the step's wall time, and a
// Chrome trace of the profiled steps beside the trial's other artifacts.
//
// By default it profiles the last `steps` warm-up steps, so that the measured steps, and so the
// trial's timings, are those of a trial without it. A profiled step runs slower (CUPTI and the op
// observers cost), which is why its figures are kernel times, never the step times.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "runx/plugin_export.h"

namespace {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

// KinetoEvent's times: microseconds in LibTorch 1.13 (startUs, durationUs), nanoseconds in 2.x
// (startNs, durationNs). Detected by the member that exists, not by version.
template <typename E>
auto StartUs(const E& e, int) -> decltype(e.startNs(), double()) {
  return static_cast<double>(e.startNs()) / 1000.0;
}
template <typename E>
double StartUs(const E& e, long) {
  return static_cast<double>(e.startUs());
}
template <typename E>
auto DurationUs(const E& e, int) -> decltype(e.durationNs(), double()) {
  return static_cast<double>(e.durationNs()) / 1000.0;
}
template <typename E>
double DurationUs(const E& e, long) {
  return static_cast<double>(e.durationUs());
}

int64_t WarmupSteps(const nlohmann::json& config) {
  const bool infer = runx::IsInference(config);
  const auto& m = config.value(infer ? "infer" : "train", nlohmann::json::object());
  return m.value("warmup_steps", infer ? 10 : 5);
}

/// One kernel (or op) name's totals over the profiled steps.
struct Total {
  int64_t calls = 0;
  double us = 0;
};

class Profile : public runx::Technique {
 public:
  void configure(const nlohmann::json& params) override {
    if (!params.is_object()) return;
    steps_ = params.value("steps", steps_);
    top_ = params.value("top", top_);
    trace_ = params.value("trace", trace_);
    if (params.contains("start")) start_ = params["start"].get<int64_t>();
  }

  nlohmann::json resolve(const nlohmann::json& params, const runx::TrialPlan& plan) override {
    nlohmann::json out = params.is_object() ? params : nlohmann::json::object();
    out["steps"] = steps_;
    out["start"] = Start(plan.config());
    return out;
  }

  void on_setup(runx::TrialContext& trial) override {
    start_ = Start(trial.config());
    cuda_ = trial.device().is_cuda();
    if (start_ + steps_ > WarmupSteps(trial.config()))
      trial.note("profile: steps " + std::to_string(start_) + "-" + std::to_string(start_ + steps_ - 1) +
                 " include measured steps: their times include the profiler's overhead");
  }

  void on_batch(runx::Batch&, runx::TrialContext&) override {
    if (step_ != start_ || active_) return;
    std::set<ActivityType> activities{ActivityType::CPU};
    if (cuda_) activities.insert(ActivityType::CUDA);
    const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/false, /*profile_memory=*/false);
    prof::prepareProfiler(config, activities);
    prof::enableProfiler(config, activities);
    active_ = true;
    t0_ = std::chrono::steady_clock::now();
  }

  void on_step_end(const runx::StepStats& stats, runx::TrialContext& trial) override {
    step_ = stats.step + 1;
    if (!active_ || stats.step != start_ + steps_ - 1) return;
    if (cuda_) torch::cuda::synchronize();
    const double wall_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
    auto result = prof::disableProfiler();
    active_ = false;
    Summarize(*result, wall_us, trial);
    if (trace_) {
      const std::string path = trial.artifact_dir() + "/trace.json";
      try {
        result->save(path);
      } catch (const c10::Error&) {  // a LibTorch built without Kineto (Debian's 1.13) cannot save
        SaveEvents(*result, path);
      }
      trial.record("profile.trace", path);
    }
  }

  void on_finish(runx::TrialContext& trial) override {
    if (!active_) return;  // the trial ended inside the profiled steps: close the profiler, keep nothing
    prof::disableProfiler();
    active_ = false;
    trial.note("profile: the trial ended before the profiled steps did; nothing recorded");
  }

 private:
  /// The first profiled step: `start`, else the last `steps` warm-up steps.
  int64_t Start(const nlohmann::json& config) const {
    return start_ >= 0 ? start_ : std::max<int64_t>(0, WarmupSteps(config) - steps_);
  }

  void Summarize(prof::ProfilerResult& result, double wall_us, runx::TrialContext& trial) const {
    std::map<std::string, Total> kernels, ops;
    std::vector<std::pair<double, double>> busy;  // device kernel intervals, for the busy time
    for (const auto& e : result.events()) {
      const double us = DurationUs(e, 0);
      if (e.deviceType() == c10::DeviceType::CUDA) {
        auto& k = kernels[e.name()];
        ++k.calls, k.us += us;
        const double start = StartUs(e, 0);
        busy.emplace_back(start, start + us);
      } else if (e.deviceType() == c10::DeviceType::CPU) {
        auto& o = ops[e.name()];
        ++o.calls, o.us += us;
      }
    }
    const double n = static_cast<double>(steps_);
    const bool device = !kernels.empty();
    const auto& totals = device ? kernels : ops;
    std::vector<std::pair<std::string, Total>> sorted(totals.begin(), totals.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.us > b.second.us; });
    double sum_us = 0;
    int64_t calls = 0;
    for (const auto& [name, t] : sorted) sum_us += t.us, calls += t.calls;
    nlohmann::json top = nlohmann::json::array();
    for (size_t i = 0; i < sorted.size() && static_cast<int64_t>(i) < top_; ++i) {
      const auto& [name, t] = sorted[i];
      top.push_back({{"name", name},
                     {"calls_per_step", static_cast<double>(t.calls) / n},
                     {"ms_per_step", t.us / n / 1000.0},
                     {"share", sum_us > 0 ? t.us / sum_us : 0.0}});
    }
    trial.record("profile.top", top.dump());
    trial.record("profile.top_of",
                 device ? "device kernels (self time)" : "CPU ops (inclusive time: nested ops count in each)");
    trial.metric("profile.steps", n);
    trial.metric("profile.wall_ms_per_step", wall_us / n / 1000.0, "ms");
    if (device) {
      // Busy time: the union of the kernels' intervals (streams may overlap).
      std::sort(busy.begin(), busy.end());
      double union_us = 0, end = -1e300;
      for (const auto& [s, e] : busy) {
        if (s > end)
          union_us += e - s, end = e;
        else if (e > end)
          union_us += e - end, end = e;
      }
      trial.metric("profile.kernel_ms_per_step", sum_us / n / 1000.0, "ms");
      trial.metric("profile.kernels_per_step", static_cast<double>(calls) / n);
      trial.metric("profile.device_busy", wall_us > 0 ? union_us / wall_us : 0.0);
    } else {
      trial.metric("profile.ops_per_step", static_cast<double>(calls) / n);
    }
  }

  /// The events as a Chrome trace of our own: one complete event ("ph": "X") per op or kernel,
  /// a process per device type, a thread per host thread. For LibTorch builds without Kineto,
  /// whose ProfilerResult::save refuses.
  static void SaveEvents(prof::ProfilerResult& result, const std::string& path) {
    nlohmann::json events = nlohmann::json::array();
    for (const auto& e : result.events()) {
      events.push_back({{"name", e.name()},
                        {"ph", "X"},
                        {"ts", StartUs(e, 0)},
                        {"dur", DurationUs(e, 0)},
                        {"pid", c10::DeviceTypeName(e.deviceType())},
                        {"tid", e.startThreadId()}});
    }
    std::ofstream out(path);
    out << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump();
    if (!out) throw std::runtime_error("profile: cannot write " + path);
  }

  int64_t steps_ = 3, start_ = -1, top_ = 20, step_ = 0;
  bool trace_ = true, cuda_ = false, active_ = false;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

RUNX_PLUGIN(profile, "1.0.0",
            "LibTorch's profiler around a few steps: device time per kernel, busy time, a Chrome trace", Profile)
