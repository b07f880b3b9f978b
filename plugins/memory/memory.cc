// memory: release the device allocator's cache on a schedule, limit the process's share of device
// (or host) memory, record what the allocator holds. See docs/techniques.md#memory.
#include <unistd.h>

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "runx/device_memory.h"
#include "runx/plugin.h"
#include "runx/plugin_export.h"

namespace {

class Memory : public runx::Technique {
 public:
  void configure(const nlohmann::json& params) override {
    const auto every = params.value("release_every", nlohmann::json("never"));
    if (every.is_number_integer()) {
      release_steps_ = every.get<int64_t>();
    } else {
      release_epoch_ = every == "epoch";
    }
    fraction_ = params.value("fraction", 0.0);
    limit_bytes_ = params.value("limit_bytes", int64_t{0});
    record_every_ = params.value("record_every", int64_t{0});
    if (fraction_ > 0 && limit_bytes_ > 0)
      throw std::invalid_argument("give either 'fraction' or 'limit_bytes', not both");
  }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    const c10::Device device = plan.device();
    const bool releases = release_steps_ > 0 || release_epoch_;
    if (releases && !runx::device_memory::HasCache(device))
      return runx::CheckResult::Incompatible(
          fmt::format("release_every needs a caching allocator (CUDA, MPS); on {} freed memory goes straight back to "
                      "the system, there is no cache to release",
                      device.str()));
    if (device.is_cuda() && fraction_ > 1)
      return runx::CheckResult::Incompatible("on CUDA 'fraction' is a share of the GPU's memory: at most 1");
    return runx::CheckResult::Ok();
  }

  void on_setup(runx::TrialContext& trial) override {
    const auto device = trial.device();
    if (device.is_cpu()) {
      int64_t limit = limit_bytes_;
      if (fraction_ > 0)
        limit = static_cast<int64_t>(fraction_ * static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
                                     static_cast<double>(sysconf(_SC_PAGESIZE)));
      if (limit > 0) {
        trial.set_host_memory_limit(limit);
        trial.record("memory.limit_bytes", std::to_string(limit));
        trial.note(fmt::format("memory: host allocations limited to {} bytes", limit));
      }
      return;
    }
    double fraction = fraction_;
    if (limit_bytes_ > 0) {
      const int64_t total = runx::device_memory::TotalBytes(device);
      if (total <= 0) throw std::runtime_error("limit_bytes: the device's total memory is unknown; use 'fraction'");
      fraction = std::min(1.0, static_cast<double>(limit_bytes_) / static_cast<double>(total));
    }
    if (fraction > 0) {
      std::string why;
      if (!runx::device_memory::SetMemoryFraction(device, fraction, &why)) throw std::runtime_error(why);
      trial.record("memory.fraction", fmt::format("{}", fraction));
      trial.note(fmt::format("memory: {} limited to {:.4f} of its memory", device.str(), fraction));
    }
  }

  void on_step_end(const runx::StepStats& stats, runx::TrialContext& trial) override {
    ++steps_;
    if (release_steps_ > 0 && steps_ % release_steps_ == 0) Release(trial, stats.step);
    if (record_every_ > 0 && steps_ % record_every_ == 0) Record(trial, stats.step);
  }

  void on_epoch_end(runx::TrialContext& trial) override {
    if (release_epoch_) Release(trial, steps_ - 1);
  }

  void on_finish(runx::TrialContext& trial) override {
    trial.metric("memory.releases", static_cast<double>(releases_));
    if (releases_ > 0) trial.metric("memory.released_bytes_total", static_cast<double>(released_total_), "bytes");
    const int64_t reserved = runx::device_memory::ReservedBytes(trial.device());
    if (reserved >= 0) trial.metric("memory.reserved_end_bytes", static_cast<double>(reserved), "bytes");
  }

 private:
  void Release(runx::TrialContext& trial, int64_t step) {
    const auto device = trial.device();
    const int64_t before = runx::device_memory::ReservedBytes(device);
    runx::device_memory::ReleaseCache(device);
    const int64_t after = runx::device_memory::ReservedBytes(device);
    ++releases_;
    if (before >= 0 && after >= 0) {
      released_total_ += before - after;
      trial.metric("memory.released_bytes", static_cast<double>(before - after), "bytes", step);
    }
  }
  void Record(runx::TrialContext& trial, int64_t step) {
    const auto device = trial.device();
    const int64_t allocated = runx::device_memory::AllocatedBytes(device);
    const int64_t reserved = runx::device_memory::ReservedBytes(device);
    if (allocated >= 0) trial.metric("memory.allocated_bytes", static_cast<double>(allocated), "bytes", step);
    if (reserved >= 0) trial.metric("memory.reserved_bytes", static_cast<double>(reserved), "bytes", step);
  }

  int64_t release_steps_ = 0;
  bool release_epoch_ = false;
  double fraction_ = 0;
  int64_t limit_bytes_ = 0, record_every_ = 0;
  int64_t steps_ = 0, releases_ = 0, released_total_ = 0;
};

}  // namespace

RUNX_PLUGIN(memory, "1.0.0", "release the allocator cache, limit device/host memory, record memory", Memory)
