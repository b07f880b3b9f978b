#pragma once
// Running a plan into the results store as one run: claim each trial, reuse what is already
// there, run the rest in child processes, record. Prints nothing: an observer hears everything.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/sweep.h"
#include "store/store.h"
#include "sweep/device_slots.h"

namespace runx::engine {

struct SweepOptions {
  std::string file;                    ///< the experiment file, as given
  std::vector<std::string> overrides;  ///< --set values, in order
  std::string command_line;
  std::string plan_hash;      ///< identity of the whole (unsharded) plan
  bool force = false;         ///< reuse nothing recorded before this run
  bool resume = false;        ///< continue the latest interrupted run of this plan
  bool any_build = false;     ///< reuse results of other runx builds
  store::RunContext context;  ///< the run's sweep, the user's commit, --tag, --note
  /// Runs a trial in this process instead of a child (debugging; no crash isolation): set by the
  /// worker's `run --in-process` (runx itself loads no LibTorch to run one).
  std::function<store::TrialRecord(const nlohmann::json& config)> in_process;
  double wait_poll_s = 1;  ///< how often to look at trials other runners hold
  /// --devices: run one trial at a time on each of these, in parallel, each trial's child pinned
  /// to its device; trials start in plan order as devices come free. Empty: one trial at a time,
  /// unpinned (the trial's `device` decides).
  std::vector<DeviceSlot> devices;
  /// Where compiled_step's `package: auto` finds the packages it names (spec::CompiledDirFor of
  /// the results store).
  std::string compiled_dir = "results/compiled";
  const std::atomic<bool>* interrupted = nullptr;  ///< set by a signal handler
};

/// How one planned trial ended in this run.
enum class TrialFate { kRan, kReused, kAlreadyInRun };

/// What a sweep tells while it runs. Every method has a do-nothing default.
class SweepObserver {
 public:
  virtual ~SweepObserver() = default;
  virtual void RunStarted(int64_t /*run_id*/, const spec::Plan& /*plan*/, bool /*resumed*/) {}
  virtual void TrialStarted(size_t /*index*/, const spec::PlannedTrial& /*trial*/) {}
  /// With --devices: the device trial `index` starts on, just before TrialStarted.
  virtual void TrialPlaced(size_t /*index*/, const std::string& /*device*/) {}
  /// A progress event of the running trial's child (JSON: step, total, loss, warmup, ...; with
  /// --devices also "device", and "index", the planned trial's index).
  virtual void TrialProgress(const nlohmann::json& /*event*/) {}
  /// `record` is a default (empty) record unless the trial ran in this run.
  virtual void TrialFinished(size_t /*index*/, const spec::PlannedTrial& /*trial*/, TrialFate /*fate*/,
                             const store::TrialRecord& /*record*/) {}
  /// Trials that other live runners hold; this run waits for them.
  virtual void Waiting(size_t /*count*/, int64_t /*holder_run*/) {}
  virtual void Warning(const std::string& /*text*/) {}
};

struct SweepResult {
  int64_t run_id = 0;
  bool resumed = false;
  bool interrupted = false;
  size_t done = 0;    ///< planned trials this run has a result for
  size_t ran = 0;     ///< of which ran in this run
  size_t reused = 0;  ///< of which were reused from the store
  size_t not_ok = 0;  ///< of those that ran, not ok
};

/// A planned trial with what identifies it here.
struct PreparedTrial {
  nlohmann::json config;  ///< the keys the trial uses: what the child runs and the store keeps
  std::string inputs;     ///< InputFiles as JSON text
  std::string device;     ///< resolved ("" when no device could be selected)
  store::TrialKey key;
  std::optional<store::TrialRecord> decided;  ///< a trial settled without running it
};

/// What the worker told of a sweep (worker/prepare.h): the build, the host, and each trial.
struct PreparedSweep {
  std::string build;
  std::map<std::string, std::string> environment;
  std::vector<std::string> warnings;
  std::vector<PreparedTrial> trials;  ///< in the plan's order
};

/// The wire form between `runx-worker prepare` (worker/prepare.h), which makes a PreparedSweep,
/// and runx, which reads it back: one JSON object, a record (outcome/record_json.h) per settled
/// trial.
nlohmann::json ToJson(const PreparedSweep& sweep);
PreparedSweep PreparedSweepFromJson(const nlohmann::json& j);

/// Asks one worker process (`runx-worker prepare`, worker/prepare.h) to identify and check the
/// plan's trials: that needs LibTorch and the plugins, which runx does not load. Throws
/// WorkerError with the worker's own words when it cannot answer.
PreparedSweep PrepareSweep(const spec::Plan& plan, const SweepOptions& options);

/// The worker (sweep/child.h WorkerPath) could not prepare the sweep's trials: not found, or it
/// failed (what() says why, with the worker's own words). Nothing was written to the store.
class WorkerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs `plan` (possibly one shard) of `experiment` into `store` as one run, with the technique
/// plugins found in plugins::PluginDirs(), which one worker process (`runx-worker prepare`) loads
/// to identify and check every trial before the run begins; each trial then runs in a worker of
/// its own (`runx-worker trial`). Trials with an ok result for the same config,
/// environment and repeat are reused; trials another live runner has claimed are waited for; the
/// rest run in child processes. A failing trial is a recorded result. Throws store::StoreError
/// when the store fails: the run is then marked failed where the store still allows it, and a
/// finished trial that could not be written is kept in a file beside the store
/// (sweep/pending.h) and recorded by the next run on that store. The run is a SweepRun
/// (sweep/run.h) scheduled by sweep/scheduler.h.
SweepResult RunSweep(const spec::Experiment& experiment, const spec::Plan& plan, store::Store& store,
                     const SweepOptions& options, SweepObserver& observer);
/// The same with the plan's trials already prepared (PrepareSweep): runx prepares them before it
/// opens the store, so that a worker that cannot answer leaves no store behind.
SweepResult RunSweep(const spec::Experiment& experiment, const spec::Plan& plan, PreparedSweep prepared,
                     store::Store& store, const SweepOptions& options, SweepObserver& observer);

/// The identity of a whole plan: its trials' config identities, repeats, labels and order.
std::string PlanHash(const spec::Plan& plan);

}  // namespace runx::engine
