// prefetch: a loader for host-resident data. `workers` threads produce batches ahead of the
// training loop into a bounded window (`depth` batches), pin them (CUDA) and the loop copies them
// to the device without blocking. Workers live for the whole trial, across epochs (batch indices
// run on). Order is exactly the default loader's: worker w makes batches w, w+W, w+2W, ... and the
// loop takes them in index order. See docs/techniques.md#prefetch.
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "runx/plugin.h"
#include "runx/plugin_export.h"

namespace {

using Clock = std::chrono::steady_clock;

class PrefetchLoader : public runx::Loader {
 public:
  PrefetchLoader(const runx::HostBatches& source, c10::Device device, int workers, int depth, bool pin,
                 bool non_blocking)
      : source_(source),
        device_(device),
        depth_(depth),
        pin_(pin && device.is_cuda()),
        non_blocking_(non_blocking && pin_) {
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w, workers] { Work(w, workers); });
  }
  ~PrefetchLoader() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& t : threads_) t.join();
  }

  runx::Batch next() override {
    const auto t0 = Clock::now();
    Slot slot;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return ready_.count(next_) > 0; });
      slot = std::move(ready_[next_]);
      ready_.erase(next_);
      ++next_;
    }
    changed_.notify_all();  // a window slot is free
    wait_ms_.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (slot.error) std::rethrow_exception(slot.error);
    if (device_.is_cpu()) return source_.prepare(std::move(slot.batch));
    return source_.prepare({slot.batch.input.to(device_, non_blocking_), slot.batch.target.to(device_, non_blocking_)});
  }

  const std::vector<double>& wait_ms() const { return wait_ms_; }

 private:
  struct Slot {
    runx::Batch batch;
    std::exception_ptr error;
  };

  void Work(int w, int workers) {
    for (int64_t index = w;; index += workers) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || index < next_ + depth_; });
        if (stop_) return;
      }
      Slot slot;
      try {
        slot.batch = source_.get(index);
        if (pin_) slot.batch = {slot.batch.input.pin_memory(), slot.batch.target.pin_memory()};
      } catch (...) {
        slot.error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_[index] = std::move(slot);
      }
      changed_.notify_all();
    }
  }

  const runx::HostBatches& source_;
  c10::Device device_;
  const int64_t depth_;
  const bool pin_, non_blocking_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int64_t, Slot> ready_;
  int64_t next_ = 0;
  bool stop_ = false;
  std::vector<double> wait_ms_;
  std::vector<std::thread> threads_;  // last: started after everything they use exists
};

class Prefetch : public runx::Technique {
 public:
  void configure(const nlohmann::json& params) override {
    workers_ = params.value("workers", 2);
    depth_ = params.value("depth", 2 * workers_);
    pin_ = params.value("pin_memory", true);
    non_blocking_ = params.value("non_blocking", true);
    if (depth_ < workers_)
      throw std::invalid_argument(
          fmt::format("depth ({}) below workers ({}) would leave workers idle", depth_, workers_));
  }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    const auto data = plan.config().value("data", nlohmann::json::object());
    const std::string source = data.value("source", "");
    if (source != "memmap" && data.value("placement", "device") != "host")
      return runx::CheckResult::Incompatible(fmt::format(
          "data source '{}' keeps its data on the device: there is no loading to overlap; set data.placement: "
          "host (or use data.source: memmap)",
          source));
    return runx::CheckResult::Ok();
  }

  std::unique_ptr<runx::Loader> make_loader(const runx::HostBatches& batches, runx::TrialContext& trial) override {
    auto loader = std::make_unique<PrefetchLoader>(batches, trial.device(), workers_, depth_, pin_, non_blocking_);
    loader_ = loader.get();
    trial.note(fmt::format("prefetch: {} workers, {} batches ahead{}", workers_, depth_,
                           trial.device().is_cuda() && pin_ ? ", pinned, non-blocking copies" : ""));
    return loader;
  }

  void on_finish(runx::TrialContext& trial) override {
    if (!loader_) return;
    const auto& w = loader_->wait_ms();
    double total = 0;
    for (double v : w) total += v;
    trial.metric("prefetch.wait_ms_total", total, "ms");
    if (!w.empty()) trial.metric("prefetch.wait_ms_mean", total / static_cast<double>(w.size()), "ms");
  }

 private:
  int workers_ = 2, depth_ = 4;
  bool pin_ = true, non_blocking_ = true;
  PrefetchLoader* loader_ = nullptr;  // owned by the runner, alive until after on_finish
};

}  // namespace

RUNX_PLUGIN(prefetch, "1.0.0", "worker threads, bounded queue, pinned memory, non-blocking copies", Prefetch)
