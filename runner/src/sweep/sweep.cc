#include "sweep/sweep.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "base/files.h"
#include "base/process.h"
#include "base/text.h"
#include "base/time.h"
#include "machine/machine_state.h"
#include "outcome/record_json.h"
#include "spec/identity.h"
#include "sweep/child.h"
#include "sweep/runners.h"
#include "version.h"

namespace runx::engine {
namespace {

using base::UtcNow;

bool Interrupted(const SweepOptions& o) { return o.interrupted && o.interrupted->load(); }
}  // namespace

nlohmann::json ToJson(const PreparedSweep& sweep) {
  nlohmann::json j{{"build", sweep.build},
                   {"environment", sweep.environment},
                   {"warnings", sweep.warnings},
                   {"trials", nlohmann::json::array()}};
  for (const auto& p : sweep.trials)
    j["trials"].push_back({{"config", p.config},
                           {"inputs", p.inputs},
                           {"device", p.device},
                           {"config_hash", p.key.config_hash},
                           {"env_hash", p.key.env_hash},
                           {"platform_hash", p.key.platform_hash},
                           {"repeat_index", p.key.repeat_index},
                           {"decided", p.decided ? ToJson(*p.decided) : nlohmann::json()}});
  return j;
}

PreparedSweep PreparedSweepFromJson(const nlohmann::json& j) {
  PreparedSweep sweep;
  sweep.build = j.value("build", "");
  sweep.environment = j.value("environment", std::map<std::string, std::string>{});
  sweep.warnings = j.value("warnings", std::vector<std::string>{});
  for (const auto& t : j.value("trials", nlohmann::json::array())) {
    PreparedTrial p;
    p.config = t.at("config");
    p.inputs = t.value("inputs", "");
    p.device = t.value("device", "");
    p.key.config_hash = t.value("config_hash", "");
    p.key.env_hash = t.value("env_hash", "");
    p.key.platform_hash = t.value("platform_hash", "");
    p.key.repeat_index = t.value("repeat_index", 0);
    if (!t.value("decided", nlohmann::json()).is_null()) p.decided = RecordFromJson(t.at("decided"));
    sweep.trials.push_back(std::move(p));
  }
  return sweep;
}

PreparedSweep PrepareSweep(const spec::Plan& plan, const SweepOptions& options) {
  nlohmann::json request{{"file", options.file}, {"compiled_dir", options.compiled_dir},
                         {"devices", nlohmann::json::array()}, {"trials", nlohmann::json::array()}};
  for (const auto& d : options.devices) request["devices"].push_back(d.name);
  for (const auto& t : plan.trials) request["trials"].push_back({{"config", t.config}, {"repeat_index", t.repeat_index}});
  // Through the worker's stdin and stdout, not files: a full TMPDIR fails a trial with its cause
  // (the trial's own files), not the whole run here.
  const std::string path = WorkerPath();
  const base::ProcessResult worker = base::RunProcess(
      {path, "prepare"}, request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!worker.started) throw WorkerError(fmt::format("cannot start the runx worker '{}': {}", path, worker.error));
  // The answer is the last line (a plugin's library may print before it).
  const std::string text = base::LastLine(worker.out);
  const auto answer = nlohmann::json::parse(text, nullptr, false);
  if (worker.status != 0 || answer.is_discarded() || !answer.is_object())
    throw WorkerError(fmt::format("the runx worker could not prepare the trials (exit status {}): {}", worker.status,
                                  worker.err.empty() ? std::string("no answer") : worker.err));
  PreparedSweep sweep = PreparedSweepFromJson(answer);
  if (sweep.trials.size() != plan.trials.size())
    throw WorkerError(fmt::format("the runx worker prepared {} trials of {}", sweep.trials.size(), plan.trials.size()));
  return sweep;
}

namespace {

/// Runs a claimed trial (or takes its settled result); nullopt when the run was interrupted.
/// `slot` pins the child to a device (--devices); `interrupted` ends it early.
std::optional<store::TrialRecord> Execute(const PreparedTrial& p, const spec::Plan& plan, const SweepOptions& options,
                                          std::function<void(const nlohmann::json&)> on_event,
                                          const DeviceSlot* slot, const std::atomic<bool>* interrupted) {
  if (p.decided) return *p.decided;
  if (options.in_process) return options.in_process(p.config);
  store::TrialRecord rec;
  ChildOptions copts;
  copts.runx_exe = WorkerPath();
  copts.timeout_s = plan.trial_timeout_s;
  copts.interrupted = interrupted;
  copts.on_event = std::move(on_event);
  if (slot) copts.env = slot->env;
  copts.rank_launcher = RankLauncherFromEnvironment();
  try {
    if (RunTrialInChild(p.config, copts, &rec) == ChildOutcome::kInterrupted) return std::nullopt;
  } catch (const std::exception& e) {  // runx's side failed (spawn, temp files, a bad record)
    rec = store::TrialRecord{};
    rec.status = TrialStatus::kFailed;
    rec.error = fmt::format("runx could not run or read the trial: {}", e.what());
    rec.error_detail = rec.error;
    rec.started_at = rec.finished_at = UtcNow();
  }
  return rec;
}

/// What claiming a planned trial gave: run it, nothing to run (reused, already in the run), or wait
/// for the runner that holds it.
enum class Claimed { kRun, kDone, kWait };

/// --devices: runs the plan's trials on the devices in parallel, one trial per device, starting
/// them in plan order as devices come free. `claim`, `finish` and the observer are called on this
/// thread only (the store is not shared between threads); each running trial has a thread that
/// waits for its child process (`exec`), whose progress events this thread relays. However this
/// function is left, every child is ended and every thread joined.
template <typename ClaimFn, typename FinishFn, typename ExecFn, typename WaitingFn>
void RunOnDevices(const spec::Plan& plan, const SweepOptions& options, SweepObserver& observer, ClaimFn& claim,
                  FinishFn& finish, ExecFn exec, WaitingFn waiting_note) {
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
    if (Interrupted(options)) stop = true;
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
      finish(r->index, r->prepared, std::move(r->record), &options.devices[s]);
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
        const Claimed c = claim(i, &p);
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
            rec = exec(raw->prepared, on_event, *slot, &stop);
          } catch (const std::exception& e) {  // runx's side: a recorded failure, as Execute makes it
            rec = store::TrialRecord{};
            rec->status = TrialStatus::kFailed;
            rec->error = fmt::format("runx could not run the trial: {}", e.what());
            rec->started_at = rec->finished_at = UtcNow();
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
      if (!noted) waiting_note(waiting.size());
      noted = true;
    }
    // Until a trial ends, an event arrives, or 100 ms (interrupts, polls) pass.
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::milliseconds(100), [&] {
      return !events.empty() || std::any_of(running.begin(), running.end(), [](const auto& r) { return r && r->done; });
    });
  }
}

std::map<std::string, std::string> RunEnvironment(const spec::Plan& plan, std::map<std::string, std::string> env) {
  env.merge(NoiseState());  // what decides noise here: CPU governor, boost, load; GPU clocks, power, driver (NVML)
  env["plan.mode"] = plan.mode;
  env["plan.order"] = plan.order;
  env["plan.order_seed"] = std::to_string(plan.order_seed);
  env["plan.variants"] = std::to_string(plan.variants);
  env["plan.repeats"] = std::to_string(plan.repeats);
  env["plan.shard"] = fmt::format("{}/{}", plan.shard_index, plan.shard_count);
  return env;
}

/// Writes `rec` into PendingDir (a file per trial, written whole or not at all); what the store's
/// error message should add: where the record is kept, or that it could not be kept and why.
std::string KeepPending(const std::string& db_path, const store::TrialRecord& rec) {
  namespace fs = std::filesystem;
  const fs::path dir = PendingDir(db_path);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path file = dir / fmt::format("run{}-order{}-repeat{}-{}.json", rec.run_id, rec.order_index,
                                          rec.repeat_index, getpid());
  std::string error =
      ec ? fmt::format("cannot create '{}': {}", dir.string(), ec.message())
         : base::WriteFileAtomically(file.string(),
                                     ToJson(rec).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!error.empty()) return fmt::format("the trial's record could not be kept either ({}): the next run measures it again", error);
  return fmt::format("the trial's record is kept in '{}' and written by the next run", file.string());
}

/// Records the trials a failed store write left in PendingDir; returns how many.
size_t RecordPending(store::Store& store, SweepObserver& observer) {
  namespace fs = std::filesystem;
  std::error_code ec;
  size_t n = 0;
  for (fs::directory_iterator it(PendingDir(store.path()), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json") continue;
    const auto j = nlohmann::json::parse(base::ReadFile(it->path().string()).value_or(""), nullptr, false);
    if (j.is_discarded()) {
      observer.Warning(fmt::format("'{}' is not a trial record; left as it is", it->path().string()));
      continue;
    }
    store.RecordTrial(RecordFromJson(j));
    fs::remove(it->path());
    ++n;
  }
  return n;
}

}  // namespace

std::string PendingDir(const std::string& db_path) { return db_path + ".pending"; }

std::string PlanHash(const spec::Plan& plan) {
  std::string all;
  for (const auto& t : plan.trials) {
    all += fmt::format("{} {} {} {}\n", spec::IdentifyConfig(t.config).hash, t.repeat_index, t.order_index, t.label);
  }
  return spec::Sha256Hex(all);
}

SweepResult RunSweep(const spec::Experiment& experiment, const spec::Plan& plan, store::Store& store,
                     const SweepOptions& options, SweepObserver& observer) {
  return RunSweep(experiment, plan, PrepareSweep(plan, options), store, options, observer);
}

SweepResult RunSweep(const spec::Experiment& experiment, const spec::Plan& plan, PreparedSweep ready,
                     store::Store& store, const SweepOptions& options, SweepObserver& observer) {
  SweepResult result;
  for (const auto& e : ready.warnings) observer.Warning(e);
  const std::string& build = ready.build;
  const std::string host = HostName();
  const int64_t pid = getpid();
  // This runner's lock beside the store; other runners judge every run by theirs (RunnerAlive).
  const RunnerLock runner_lock(store.path());
  const store::LivenessCheck alive = [&store](const std::string& h, int64_t p, const std::string& token) {
    return RunnerAlive(store.path(), h, p, token);
  };
  store.MarkDeadRuns(alive, UtcNow());
  RemoveStaleTrialDirs();
  if (const size_t n = RecordPending(store, observer); n > 0)
    observer.Warning(fmt::format("recorded {} trial{} that an earlier run could not write to the store", n, n == 1 ? "" : "s"));
  const int64_t experiment_id =
      store.AddExperiment(experiment.config.value("name", ""), experiment.path, experiment.text, experiment.text_sha256);

  const std::string shard = fmt::format("{}/{}", plan.shard_index, plan.shard_count);
  std::optional<store::ResumableRun> resumed;
  if (options.resume) {
    resumed = store.ResumeRun(options.plan_hash, shard, host, pid, runner_lock.token());
    if (!resumed) observer.Warning("--resume: no interrupted run of this plan (and shard) in the store; starting a new run");
  }
  if (resumed) {
    result.run_id = resumed->id;
    result.resumed = true;
  } else {
    store::RunInfo info;
    info.experiment_id = experiment_id;
    info.started_at = UtcNow();
    info.host = host;
    info.command = options.command_line;
    info.overrides_json = nlohmann::json(options.overrides).dump();
    info.runx_version = Version();
    info.git_sha = GitSha();
    if (GitDirty() >= 0) info.git_dirty = GitDirty() == 1;
    info.build_type = BuildType();
    info.runx_build = build;
    info.pid = pid;
    info.pid_token = runner_lock.token();
    info.plan_hash = options.plan_hash;
    info.shard = shard;
    info.force = options.force;
    info.any_build = options.any_build;
    info.context = options.context;
    result.run_id = store.BeginRun(info);
    store.AddRunEnvironment(result.run_id, RunEnvironment(plan, ready.environment));
  }
  observer.RunStarted(result.run_id, plan, result.resumed);

  // A trial waiting for another runner keeps what identified it (its input files hashed, its
  // techniques checked): that is done once, not at every look at the trial.
  std::map<size_t, PreparedTrial> prepared;
  for (size_t i = 0; i < ready.trials.size(); ++i) prepared.emplace(i, std::move(ready.trials[i]));
  std::vector<size_t> waiting;                   // trials another runner holds
  int64_t holder = 0;
  // A claim older than this is stale whoever holds it: its trial would have timed out long ago.
  const double stale_after_s = 2 * plan.trial_timeout_s + 60;
  // Claims trial i: kRun (with `*run` filled) when this run must run it, kDone when its result is
  // settled (reused, or already in this run), kWait when another runner holds it.
  const auto claim = [&](size_t i, PreparedTrial* run) {
    const spec::PlannedTrial& t = plan.trials[i];
    auto found = prepared.find(i);
    if (found == prepared.end()) throw std::logic_error(fmt::format("trial {} claimed twice", i));
    const store::Membership place{t.label, t.is_baseline, t.repeat_index, t.order_index};
    const store::Claim claim =
        store.ClaimTrial(result.run_id, found->second.key, place, alive, UtcNow(), stale_after_s);
    if (claim.outcome == store::ClaimOutcome::kBusy) {
      holder = claim.holder_run;
      return Claimed::kWait;
    }
    *run = std::move(found->second);  // only trials still waiting stay prepared
    prepared.erase(found);
    if (claim.outcome != store::ClaimOutcome::kClaimed) {
      ++result.done;
      if (claim.outcome == store::ClaimOutcome::kReused) ++result.reused;
      observer.TrialFinished(i, t,
                             claim.outcome == store::ClaimOutcome::kReused ? TrialFate::kReused : TrialFate::kAlreadyInRun,
                             store::TrialRecord{});
      return Claimed::kDone;
    }
    return Claimed::kRun;
  };
  // Records what the claimed trial i gave (nullopt: interrupted, the claim goes back).
  const auto finish = [&](size_t i, const PreparedTrial& p, std::optional<store::TrialRecord> rec, const DeviceSlot* slot) {
    const spec::PlannedTrial& t = plan.trials[i];
    if (!rec) {
      store.ReleaseClaim(result.run_id, p.key);
      return;
    }
    rec->run_id = result.run_id;
    rec->config_hash = p.key.config_hash;
    rec->env_hash = p.key.env_hash;
    rec->platform_hash = p.key.platform_hash;
    rec->inputs_json = p.inputs;
    rec->config_json = p.config.dump();
    rec->label = t.label;
    rec->is_baseline = t.is_baseline;
    rec->repeat_index = t.repeat_index;
    rec->order_index = t.order_index;
    if (rec->device.empty()) rec->device = p.device;
    if (slot) {
      // The child saw its GPU as cuda:0; the store names the machine's device.
      if (slot->name.rfind("cuda:", 0) == 0 && rec->device.rfind("cuda", 0) == 0) rec->device = slot->name;
      rec->environment["device_slot"] = slot->name;
      rec->environment["device_slot_index"] = std::to_string(slot - options.devices.data());
      if (const std::string sharing = DeviceSharing(TrialsSideBySide(options.devices, p.device)); !sharing.empty())
        rec->environment["device_sharing"] = sharing;
    }
    if (rec->error_detail.empty()) rec->error_detail = rec->error;
    try {
      store.RecordTrial(*rec);
    } catch (const store::StoreError& e) {  // keep the finished trial for the next run
      throw store::StoreError(fmt::format("{} ({})", e.what(), KeepPending(store.path(), *rec)));
    }
    ++result.done;
    ++result.ran;
    if (rec->status != TrialStatus::kOk) ++result.not_ok;
    observer.TrialFinished(i, t, TrialFate::kRan, *rec);
  };
  // Claims trial i and runs it here; false when it must wait for another runner.
  const auto attempt = [&](size_t i) {
    PreparedTrial p;
    const Claimed c = claim(i, &p);
    if (c != Claimed::kRun) return c == Claimed::kDone;
    observer.TrialStarted(i, plan.trials[i]);
    finish(i, p,
           Execute(p, plan, options, [&observer](const nlohmann::json& ev) { observer.TrialProgress(ev); },
                   nullptr, options.interrupted),
           nullptr);
    return true;
  };

  try {
  if (!options.devices.empty()) {
    RunOnDevices(plan, options, observer, claim, finish,
                 [&](const PreparedTrial& p, std::function<void(const nlohmann::json&)> on_event, const DeviceSlot& slot,
                     const std::atomic<bool>* stop) { return Execute(p, plan, options, on_event, &slot, stop); },
                 [&](size_t n) { observer.Waiting(n, holder); });
  }
  for (size_t i = 0; i < plan.trials.size() && !Interrupted(options) && options.devices.empty(); ++i) {
    if (!attempt(i)) waiting.push_back(i);
  }
  // Trials other runners hold: their results are reused when they finish; a runner that died
  // leaves its claim to this one.
  while (!waiting.empty() && !Interrupted(options)) {
    observer.Waiting(waiting.size(), holder);
    for (double slept = 0; slept < options.wait_poll_s && !Interrupted(options); slept += 0.1)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::vector<size_t> still;
    for (size_t i : waiting) {
      if (Interrupted(options) || !attempt(i)) still.push_back(i);
    }
    waiting = std::move(still);
  }
  } catch (const store::StoreError&) {
    try {
      store.EndRun(result.run_id, RunStatus::kFailed, UtcNow());
    } catch (const store::StoreError&) {  // the store is gone: the next runx marks the run interrupted
    }
    throw;
  }
  result.interrupted = Interrupted(options);
  store.EndRun(result.run_id, result.interrupted ? RunStatus::kInterrupted : RunStatus::kOk, UtcNow());
  return result;
}

}  // namespace runx::engine
