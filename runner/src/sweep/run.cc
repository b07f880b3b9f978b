#include "sweep/run.h"

#include <unistd.h>

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/time.h"
#include "machine/machine_state.h"
#include "sweep/child.h"
#include "sweep/pending.h"
#include "sweep/record.h"
#include "version.h"

namespace runx::engine {
namespace {

using base::UtcNow;

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

}  // namespace

SweepRun::SweepRun(const spec::Experiment& experiment, const spec::Plan& plan, PreparedSweep ready, store::Store& store,
                   const SweepOptions& options, SweepObserver& observer)
    : plan_(plan),
      store_(store),
      options_(options),
      observer_(observer),
      runner_lock_(store.path()),
      alive_([this](const std::string& h, int64_t p, const std::string& token) {
        return RunnerAlive(store_.path(), h, p, token);
      }),
      stale_after_s_(2 * plan.trial_timeout_s + 60) {
  for (const auto& e : ready.warnings) observer_.Warning(e);
  const std::string& build = ready.build;
  const std::string host = HostName();
  const int64_t pid = getpid();
  store_.MarkDeadRuns(alive_, UtcNow());
  RemoveStaleTrialDirs();
  if (const size_t n = RecordPending(store_, observer_); n > 0)
    observer_.Warning(
        fmt::format("recorded {} trial{} that an earlier run could not write to the store", n, n == 1 ? "" : "s"));
  const int64_t experiment_id = store_.AddExperiment(experiment.config.value("name", ""), experiment.path,
                                                     experiment.text, experiment.text_sha256);

  const std::string shard = fmt::format("{}/{}", plan.shard_index, plan.shard_count);
  std::optional<store::ResumableRun> resumed;
  if (options.resume) {
    resumed = store_.ResumeRun(options.plan_hash, shard, host, pid, runner_lock_.token());
    if (!resumed)
      observer_.Warning("--resume: no interrupted run of this plan (and shard) in the store; starting a new run");
  }
  if (resumed) {
    result_.run_id = resumed->id;
    result_.resumed = true;
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
    info.pid_token = runner_lock_.token();
    info.plan_hash = options.plan_hash;
    info.shard = shard;
    info.force = options.force;
    info.any_build = options.any_build;
    info.context = options.context;
    result_.run_id = store_.BeginRun(info);
    store_.AddRunEnvironment(result_.run_id, RunEnvironment(plan, ready.environment));
  }
  observer_.RunStarted(result_.run_id, plan, result_.resumed);
  for (size_t i = 0; i < ready.trials.size(); ++i) prepared_.emplace(i, std::move(ready.trials[i]));
}

Claimed SweepRun::Claim(size_t i, PreparedTrial* run) {
  const spec::PlannedTrial& t = plan_.trials[i];
  auto found = prepared_.find(i);
  if (found == prepared_.end()) throw std::logic_error(fmt::format("trial {} claimed twice", i));
  const store::Membership place{t.label, t.is_baseline, t.repeat_index, t.order_index};
  const store::Claim claim =
      store_.ClaimTrial(result_.run_id, found->second.key, place, alive_, UtcNow(), stale_after_s_);
  if (claim.outcome == store::ClaimOutcome::kBusy) {
    holder_ = claim.holder_run;
    return Claimed::kWait;
  }
  *run = std::move(found->second);  // only trials still waiting stay prepared
  prepared_.erase(found);
  if (claim.outcome != store::ClaimOutcome::kClaimed) {
    ++result_.done;
    if (claim.outcome == store::ClaimOutcome::kReused) ++result_.reused;
    observer_.TrialFinished(
        i, t, claim.outcome == store::ClaimOutcome::kReused ? TrialFate::kReused : TrialFate::kAlreadyInRun,
        store::TrialRecord{});
    return Claimed::kDone;
  }
  return Claimed::kRun;
}

std::optional<store::TrialRecord> SweepRun::Execute(const PreparedTrial& p,
                                                    std::function<void(const nlohmann::json&)> on_event,
                                                    const DeviceSlot* slot,
                                                    const std::atomic<bool>* interrupted) const {
  if (p.decided) return *p.decided;
  if (options_.in_process) return options_.in_process(p.config);
  store::TrialRecord rec;
  ChildOptions copts;
  copts.runx_exe = WorkerPath();
  copts.timeout_s = plan_.trial_timeout_s;
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

void SweepRun::Finish(size_t i, const PreparedTrial& p, std::optional<store::TrialRecord> rec, const DeviceSlot* slot) {
  const spec::PlannedTrial& t = plan_.trials[i];
  if (!rec) {
    store_.ReleaseClaim(result_.run_id, p.key);
    return;
  }
  RecordInRun(*rec, result_.run_id, t, p, slot, options_.devices);
  try {
    store_.RecordTrial(*rec);
  } catch (const store::StoreError& e) {  // keep the finished trial for the next run
    throw store::StoreError(fmt::format("{} ({})", e.what(), KeepPending(store_.path(), *rec)));
  }
  ++result_.done;
  ++result_.ran;
  if (rec->status != TrialStatus::kOk) ++result_.not_ok;
  observer_.TrialFinished(i, t, TrialFate::kRan, *rec);
}

SweepResult SweepRun::End() {
  result_.interrupted = Interrupted();
  store_.EndRun(result_.run_id, result_.interrupted ? RunStatus::kInterrupted : RunStatus::kOk, UtcNow());
  return result_;
}

void SweepRun::Fail() {
  try {
    store_.EndRun(result_.run_id, RunStatus::kFailed, UtcNow());
  } catch (const store::StoreError&) {  // the store is gone: the next runx marks the run interrupted
  }
}

}  // namespace runx::engine
