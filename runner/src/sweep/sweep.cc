#include "sweep/sweep.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/process.h"
#include "base/text.h"
#include "outcome/record_json.h"
#include "spec/identity.h"
#include "sweep/child.h"
#include "sweep/run.h"
#include "sweep/scheduler.h"

namespace runx::engine {

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
  nlohmann::json request{{"file", options.file},
                         {"compiled_dir", options.compiled_dir},
                         {"devices", nlohmann::json::array()},
                         {"trials", nlohmann::json::array()}};
  for (const auto& d : options.devices) request["devices"].push_back(d.name);
  for (const auto& t : plan.trials)
    request["trials"].push_back({{"config", t.config}, {"repeat_index", t.repeat_index}});
  // Through the worker's stdin and stdout, not files: a full TMPDIR fails a trial with its cause
  // (the trial's own files), not the whole run here.
  const std::string path = WorkerPath();
  const base::ProcessResult worker =
      base::RunProcess({path, "prepare"}, request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
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
  SweepRun run(experiment, plan, std::move(ready), store, options, observer);
  try {
    if (options.devices.empty()) {
      RunInOrder(run);
    } else {
      RunOnDevices(run);
    }
  } catch (const store::StoreError&) {
    run.Fail();
    throw;
  }
  return run.End();
}

}  // namespace runx::engine
