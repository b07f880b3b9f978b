#pragma once
// One run of a plan in the results store, from its row to its end: the trials claimed, run in a
// worker each and recorded. The schedulers (sweep/scheduler.h) decide when each trial is tried;
// RunSweep (sweep/sweep.h) puts the two together. Torch-free.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "spec/sweep.h"
#include "store/store.h"
#include "sweep/device_slots.h"
#include "sweep/runners.h"
#include "sweep/sweep.h"

namespace runx::engine {

/// What claiming a planned trial gave: run it, nothing to run (reused, already in the run), or
/// wait for the runner that holds it.
enum class Claimed { kRun, kDone, kWait };

/// A run in the store. Claim, Finish and the observer are called on one thread (the store is not
/// shared between threads); Execute may run on any.
class SweepRun {
 public:
  /// Begins the run: takes this runner's lock beside the store, marks the runs whose runner is
  /// gone, removes their trials' stale folders, records the trials an earlier run could not write,
  /// and begins a run (or, with --resume, takes up the latest interrupted run of the plan).
  SweepRun(const spec::Experiment& experiment, const spec::Plan& plan, PreparedSweep prepared, store::Store& store,
           const SweepOptions& options, SweepObserver& observer);
  SweepRun(const SweepRun&) = delete;
  SweepRun& operator=(const SweepRun&) = delete;

  /// Claims trial i: kRun (with `*run` filled) when this run must run it, kDone when its result is
  /// settled (reused, or already in this run), kWait when another runner holds it.
  Claimed Claim(size_t i, PreparedTrial* run);

  /// Runs a claimed trial in a worker (or takes its settled result); nullopt when `interrupted`
  /// ended it. `slot` pins the worker to a device (--devices). A failure on runx's side (spawn,
  /// temporary files, a bad record) is a failed record.
  std::optional<store::TrialRecord> Execute(const PreparedTrial& p, std::function<void(const nlohmann::json&)> on_event,
                                            const DeviceSlot* slot, const std::atomic<bool>* interrupted) const;

  /// Records what the claimed trial i gave (nullopt: interrupted, the claim goes back). A record
  /// the store cannot take is kept for the next run (sweep/pending.h) and the StoreError rethrown.
  void Finish(size_t i, const PreparedTrial& p, std::optional<store::TrialRecord> rec, const DeviceSlot* slot);

  /// Ends the run: interrupted when the user stopped it, else ok.
  SweepResult End();
  /// Marks the run failed after a store error, where the store still allows it.
  void Fail();

  /// The user interrupted the run (SIGINT, SIGTERM).
  bool Interrupted() const { return options_.interrupted && options_.interrupted->load(); }
  /// The run that holds the trial last found busy.
  int64_t holder() const { return holder_; }
  const spec::Plan& plan() const { return plan_; }
  const SweepOptions& options() const { return options_; }
  SweepObserver& observer() const { return observer_; }

 private:
  const spec::Plan& plan_;
  store::Store& store_;
  const SweepOptions& options_;
  SweepObserver& observer_;
  /// This runner's lock beside the store; other runners judge every run by theirs (RunnerAlive).
  const RunnerLock runner_lock_;
  const store::LivenessCheck alive_;
  /// A claim older than this is stale whoever holds it: its trial would have timed out long ago.
  const double stale_after_s_;
  /// The trials not yet claimed. A trial waiting for another runner keeps what identified it (its
  /// input files hashed, its techniques checked): that is done once, not at every look at it.
  std::map<size_t, PreparedTrial> prepared_;
  int64_t holder_ = 0;
  SweepResult result_;
};

}  // namespace runx::engine
