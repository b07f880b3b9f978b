// auto_batch: find the batch size before training. max_batch doubles the batch until a probe runs
// out of memory, then bisects between the last fit and the first failure; throughput probes the
// powers of two that fit and keeps the fastest per sample. Every probe is one full training step
// (all techniques applied) plus `probe_steps` timed ones, through TrialContext::probe_batch, which
// catches out-of-memory, releases the cache and restores the weights. See docs/techniques.md.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runx/plugin.h"
#include "runx/plugin_export.h"

namespace {

int64_t HostAvailableBytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char key[64];
  long long kb = 0;
  char unit[16];
  int64_t out = 0;
  while (std::fscanf(f, "%63s %lld %15s", key, &kb, unit) == 3)
    if (std::string(key) == "MemAvailable:") {
      out = static_cast<int64_t>(kb) * 1024;
      break;
    }
  std::fclose(f);
  return out;
}

class AutoBatch : public runx::Technique {
 public:
  void configure(const nlohmann::json& params) override {
    objective_ = params.value("objective", "max_batch");
    start_ = params.value("start", int64_t{1});
    max_ = params.value("max", int64_t{65536});
    multiple_ = params.value("multiple_of", int64_t{8});
    probe_steps_ = params.value("probe_steps", 2);
    headroom_ = params.value("headroom", 0.9);
    host_fraction_ = params.value("host_limit_fraction", 0.8);
    if (start_ > max_) throw std::invalid_argument(fmt::format("start ({}) is above max ({})", start_, max_));
  }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    // MPS pages to disk long before its allocator reports out of memory (its default limit is 1.7x
    // the recommended working set): probing without a limit would measure swapping, not fitting.
    const nlohmann::json* memory = plan.technique("memory");
    const bool limited =
        memory && memory->is_object() && (memory->contains("fraction") || memory->contains("limit_bytes"));
    if (plan.device().is_mps() && !limited)
      return runx::CheckResult::Incompatible(
          "on MPS out-of-memory comes only after swapping; add 'memory: {fraction: 1.0}' (or lower) so that a "
          "batch that does not fit fails instead");
    return runx::CheckResult::Ok();
  }

  void on_train_begin(runx::TrialContext& trial) override {
    // On the CPU a probe that does not fit must fail as an exception, not as the OOM killer.
    const bool host_guard = trial.device().is_cpu() && trial.host_memory_limit() == 0;
    if (host_guard) {
      const auto limit = static_cast<int64_t>(host_fraction_ * static_cast<double>(HostAvailableBytes()));
      trial.set_host_memory_limit(limit);
      trial.note(fmt::format("auto_batch: probing under a host memory limit of {} bytes", limit));
    }
    const int64_t chosen = objective_ == "throughput" ? Throughput(trial) : MaxBatch(trial);
    if (host_guard) trial.set_host_memory_limit(0);

    nlohmann::json frontier = nlohmann::json::array();
    for (size_t i = 0; i < probes_.size(); ++i) {
      const auto& p = probes_[i];
      const auto step = static_cast<int64_t>(i);
      trial.metric("auto_batch.batch", static_cast<double>(p.batch_size), "", step);
      trial.metric("auto_batch.fits", p.fits ? 1.0 : 0.0, "", step);
      if (p.fits) {
        trial.metric("auto_batch.step_ms", p.step_ms, "ms", step);
        trial.metric("auto_batch.samples_per_s", static_cast<double>(p.batch_size) * 1000.0 / p.step_ms, "samples/s",
                     step);
        trial.metric("auto_batch.peak_bytes", static_cast<double>(p.peak_bytes), "bytes", step);
      }
      frontier.push_back(
          {{"batch", p.batch_size}, {"fits", p.fits}, {"step_ms", p.step_ms}, {"peak_bytes", p.peak_bytes}});
    }
    trial.record("auto_batch.frontier", frontier.dump());
    if (chosen < 1)
      throw std::runtime_error(fmt::format("out of memory: not even a batch of {} fits ({})", start_,
                                           probes_.empty() ? "no probe" : probes_.front().error));
    trial.metric("auto_batch.chosen", static_cast<double>(chosen));
    trial.note(fmt::format("auto_batch ({}): batch {} after {} probes", objective_, chosen, probes_.size()));
    trial.set_batch_size(chosen);
  }

 private:
  const runx::ProbeResult& Probe(runx::TrialContext& trial, int64_t n) {
    probes_.push_back(trial.probe_batch(n, probe_steps_));
    return probes_.back();
  }

  int64_t RoundDown(int64_t n) const { return n >= multiple_ ? n / multiple_ * multiple_ : n; }

  int64_t MaxBatch(runx::TrialContext& trial) {
    int64_t fit = 0, fail = 0;
    for (int64_t n = start_;; n = std::min(n * 2, max_)) {
      if (Probe(trial, n).fits) {
        fit = n;
        if (n == max_) break;
      } else {
        fail = n;
        break;
      }
    }
    if (fit == 0) return 0;
    // Bisect (fit, fail) down to the granularity.
    while (fail > 0 && fail - fit > std::max<int64_t>(1, fit >= multiple_ ? multiple_ : 1)) {
      const int64_t mid = fit + (fail - fit) / 2;
      (Probe(trial, mid).fits ? fit : fail) = mid;
    }
    int64_t chosen = RoundDown(fit);
    if (headroom_ < 1.0)
      chosen = std::max<int64_t>(1, RoundDown(static_cast<int64_t>(static_cast<double>(chosen) * headroom_)));
    return chosen;
  }

  int64_t Throughput(runx::TrialContext& trial) {
    int64_t best = 0;
    double best_rate = 0;
    for (int64_t n = start_;; n = std::min(n * 2, max_)) {
      const auto& p = Probe(trial, n);
      if (!p.fits) break;
      const double rate = static_cast<double>(n) * 1000.0 / std::max(p.step_ms, 1e-6);
      if (rate > best_rate) best = n, best_rate = rate;
      if (n == max_) break;
    }
    return best;
  }

  std::string objective_;
  int64_t start_ = 1, max_ = 65536, multiple_ = 8;
  int probe_steps_ = 2;
  double headroom_ = 0.9, host_fraction_ = 0.8;
  std::vector<runx::ProbeResult> probes_;
};

}  // namespace

RUNX_PLUGIN(auto_batch, "1.1.0", "find the largest batch that fits, or the fastest per sample", AutoBatch)
