#include "sweep/scheduler.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/time.h"

namespace runx::engine {
namespace {

/// Claims trial i and runs it here; false when it must wait for another runner.
bool Attempt(SweepRun& run, size_t i) {
  PreparedTrial p;
  const Claimed c = run.Claim(i, &p);
  if (c != Claimed::kRun) return c == Claimed::kDone;
  SweepObserver& observer = run.observer();
  observer.TrialStarted(i, run.plan().trials[i]);
  run.Finish(
      i, p,
      run.Execute(
          p, [&observer](const nlohmann::json& ev) { observer.TrialProgress(ev); }, nullptr, run.options().interrupted),
      nullptr);
  return true;
}

}  // namespace

void RunInOrder(SweepRun& run) {
  const SweepOptions& options = run.options();
  std::vector<size_t> waiting;  // trials another runner holds
  for (size_t i = 0; i < run.plan().trials.size() && !run.Interrupted(); ++i) {
    if (!Attempt(run, i)) waiting.push_back(i);
  }
  // Trials other runners hold: their results are reused when they finish; a runner that died
  // leaves its claim to this one.
  while (!waiting.empty() && !run.Interrupted()) {
    run.observer().Waiting(waiting.size(), run.holder());
    for (double slept = 0; slept < options.wait_poll_s && !run.Interrupted(); slept += 0.1)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::vector<size_t> still;
    for (size_t i : waiting) {
      if (run.Interrupted() || !Attempt(run, i)) still.push_back(i);
    }
    waiting = std::move(still);
  }
}

void RunOnDevices(SweepRun& run) {
  const spec::Plan& plan = run.plan();
  const SweepOptions& options = run.options();
  SweepObserver& observer = run.observer();
  struct Running {
    size_t index = 0;
    PreparedTrial prepared;
    std::thread thread;
    bool done = false;  // guarded by mu
    std::optional<store::TrialRecord> record;
  };
  const size_t n = options.devices.size();
  std::vector<std::unique_ptr<Running>> running(n);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<nlohmann::json> events;  // guarded by mu
  std::atomic<bool> stop{false};
  struct JoinAll {
    std::atomic<bool>& stop;
    std::vector<std::unique_ptr<Running>>& running;
    ~JoinAll() {
      stop = true;
      for (auto& r : running)
        if (r && r->thread.joinable()) r->thread.join();
    }
  } join_all{stop, running};

  std::deque<size_t> queue;
  for (size_t i = 0; i < plan.trials.size(); ++i) queue.push_back(i);
  std::vector<size_t> waiting;  // held by other runners
  auto next_poll = std::chrono::steady_clock::now();
  bool noted = false;  // the observer heard about the waiting trials since the last poll
  const auto is_done = [&](size_t s) {
    std::lock_guard<std::mutex> lock(mu);
    return running[s] && running[s]->done;
  };
  while (true) {
    if (run.Interrupted()) stop = true;
    std::vector<nlohmann::json> relay;
    {
      std::lock_guard<std::mutex> lock(mu);
      relay.swap(events);
    }
    for (const auto& ev : relay) observer.TrialProgress(ev);
    for (size_t s = 0; s < n; ++s) {
      if (!is_done(s)) continue;
      running[s]->thread.join();
      std::unique_ptr<Running> r = std::move(running[s]);
      run.Finish(r->index, r->prepared, std::move(r->record), &options.devices[s]);
    }
    const bool any_running = std::any_of(running.begin(), running.end(), [](const auto& r) { return r != nullptr; });
    if (stop && !any_running) return;
    // Trials another runner held go back into the queue every wait_poll_s.
    if (!stop && queue.empty() && !waiting.empty() && std::chrono::steady_clock::now() >= next_poll) {
      queue.assign(waiting.begin(), waiting.end());
      waiting.clear();
      noted = false;
      next_poll = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                         std::chrono::duration<double>(options.wait_poll_s));
    }
    for (size_t s = 0; s < n && !stop; ++s) {
      while (!running[s] && !queue.empty()) {
        const size_t i = queue.front();
        queue.pop_front();
        PreparedTrial p;
        const Claimed c = run.Claim(i, &p);
        if (c == Claimed::kWait) waiting.push_back(i);
        if (c != Claimed::kRun) continue;
        const DeviceSlot* slot = &options.devices[s];
        observer.TrialPlaced(i, slot->name);
        observer.TrialStarted(i, plan.trials[i]);
        auto r = std::make_unique<Running>();
        r->index = i;
        r->prepared = std::move(p);
        Running* raw = r.get();
        r->thread = std::thread([&, raw, slot] {
          const auto on_event = [&, raw, slot](const nlohmann::json& ev) {
            nlohmann::json e = ev;
            e["device"] = slot->name;
            e["index"] = raw->index;
            std::lock_guard<std::mutex> lock(mu);
            events.push_back(std::move(e));
          };
          std::optional<store::TrialRecord> rec;
          try {
            rec = run.Execute(raw->prepared, on_event, slot, &stop);
          } catch (const std::exception& e) {  // runx's side: a recorded failure, as Execute makes it
            rec = store::TrialRecord{};
            rec->status = TrialStatus::kFailed;
            rec->error = fmt::format("runx could not run the trial: {}", e.what());
            rec->started_at = rec->finished_at = base::UtcNow();
          }
          {
            std::lock_guard<std::mutex> lock(mu);
            raw->record = std::move(rec);
            raw->done = true;
          }
          cv.notify_all();
        });
        running[s] = std::move(r);
      }
    }
    const bool busy = std::any_of(running.begin(), running.end(), [](const auto& r) { return r != nullptr; });
    if (!busy && queue.empty()) {
      if (waiting.empty() || stop) return;
      if (!noted) observer.Waiting(waiting.size(), run.holder());
      noted = true;
    }
    // Until a trial ends, an event arrives, or 100 ms (interrupts, polls) pass.
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::milliseconds(100), [&] {
      return !events.empty() || std::any_of(running.begin(), running.end(), [](const auto& r) { return r && r->done; });
    });
  }
}

}  // namespace runx::engine
