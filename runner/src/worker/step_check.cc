#include "worker/step_check.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "base/files.h"
#include "spec/sweep.h"
#include "spec/trial_config.h"
#include "store/store.h"
#include "sweep/sweep.h"
#include "worker/weights_distance.h"

namespace runx::engine {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr double kFloorFactor = 2;

/// The config's techniques, a mapping (spec::NormaliseOptimizations made every list one).
json& Optimizations(json& config) {
  json& o = config["optimizations"];
  if (!o.is_object()) o = json::object();
  return o;
}

std::string Precision(const json& config) { return spec::Name(spec::TrialConfig::From(config).precision); }

/// The check's settings on a trial's config: `steps` training steps from the first (no warm-up, no
/// evaluation), the weights exported into `dir`, reproducible kernels (determinism, which also
/// turns TF32 off unless the config asks for it).
json Prepared(json config, int steps, const std::string& dir) {
  if (spec::TrialConfig::From(config).infer)
    throw std::invalid_argument("the step check trains; this trial's task is 'infer'");
  json& train = config["train"];
  train["steps"] = steps;
  train["warmup_steps"] = 0;
  train["eval"] = false;
  json& o = Optimizations(config);
  o["export"] = {{"format", "weights"}, {"dir", dir}};
  if (!o.contains("determinism")) o["determinism"] = {{"warn_only", true}};
  return config;
}

bool ChannelsLast(json& config) { return Optimizations(config).contains("channels_last"); }

std::string Describe(json config, const std::string& without) {
  const bool cl = ChannelsLast(config);
  std::string precision = Precision(config);
  if (precision == "fp32") precision = "fp32 (TF32 off)";
  return fmt::format("{}{}, {}", without.empty() ? "" : "without " + without + ", ", precision,
                     cl ? "channels_last" : "contiguous");
}

/// Hears the one trial of a check's run.
class OneTrial : public SweepObserver {
 public:
  void TrialFinished(size_t, const spec::PlannedTrial&, TrialFate, const store::TrialRecord& record) override {
    record_ = record;
    finished_ = true;
  }
  bool finished() const { return finished_; }
  const store::TrialRecord& record() const { return record_; }

 private:
  bool finished_ = false;
  store::TrialRecord record_;
};

StepCheckRun RunOne(const std::string& role, const std::string& what, json config, const spec::SchemaSet& schemas,
                    store::Store& store, const StepCheckOptions& options) {
  StepCheckRun run;
  run.role = role;
  run.what = what;
  run.experiment = (fs::path(options.work_dir) / (role + ".yaml")).string();
  config["name"] = spec::TrialConfig::From(config).name + "-step-check-" + role;
  config["repeats"] = 1;
  config["order"] = "sequential";
  base::WriteFileAtomicallyOrThrow(run.experiment, config.dump(1) + "\n");  // JSON is YAML
  const spec::Experiment experiment = spec::Load(run.experiment, {}, schemas);
  const spec::Plan plan = spec::Expand(experiment, schemas);
  SweepOptions sweep;
  sweep.file = run.experiment;
  sweep.command_line = "runx (step check) " + run.experiment;
  sweep.plan_hash = PlanHash(plan);
  sweep.force = true;
  sweep.compiled_dir = options.compiled_dir;
  sweep.interrupted = options.interrupted;
  OneTrial observer;
  RunSweep(experiment, plan, store, sweep, observer);
  if (!observer.finished()) {
    run.error = "the run was interrupted";
    return run;
  }
  const auto& r = observer.record();
  run.status = r.status;
  run.error = r.error;
  for (const auto& s : r.steps)
    if (s.phase != "eval" && s.loss) run.losses.push_back(*s.loss);
  if (const auto w = r.environment.find("export.weights"); w != r.environment.end()) run.weights = w->second;
  if (run.status == TrialStatus::kOk && run.weights.empty()) {
    run.status = TrialStatus::kFailed;
    run.error = "it exported no weights (environment export.weights)";
  }
  return run;
}

double WorstRelative(const std::vector<double>& reference, const std::vector<double>& other) {
  double worst = 0;
  for (size_t k = 0; k < reference.size(); ++k) {
    const double d = std::abs(other[k] - reference[k]) / std::max(std::abs(reference[k]), 1e-12);
    worst = std::max(worst, std::isnan(d) ? INFINITY : d);
  }
  return worst;
}

bool AllFinite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

}  // namespace

StepCheckVerdict JudgeStep(bool fp32, const std::vector<double>& reference_losses,
                           const std::vector<double>& candidate_losses, std::optional<double> weights_diff,
                           const std::string& floor_name, const std::optional<std::vector<double>>& floor_losses,
                           std::optional<double> floor_weights) {
  StepCheckVerdict v;
  v.tolerance = fp32 ? 1e-3 : 2e-2;
  if (reference_losses.empty() || !AllFinite(reference_losses)) {
    v.could_not_tell = true;
    v.reason = "the reference step's losses are missing or not finite: nothing to read the candidate against";
    return v;
  }
  if (candidate_losses.size() != reference_losses.size()) {
    v.reason = fmt::format("the candidate recorded {} losses where the reference recorded {}", candidate_losses.size(),
                           reference_losses.size());
    return v;
  }
  const bool floor = floor_losses && floor_losses->size() == reference_losses.size() && floor_weights;
  if (floor) {
    v.floor_name = floor_name;
    v.loss_floor = WorstRelative(reference_losses, *floor_losses);
    v.weight_floor = *floor_weights;
  }
  v.loss_diff = WorstRelative(reference_losses, candidate_losses);
  v.loss_bound = std::max(v.tolerance, kFloorFactor * v.loss_floor.value_or(0));
  v.weight_diff = weights_diff;
  v.weight_bound = std::max(v.tolerance, kFloorFactor * v.weight_floor.value_or(0));
  std::vector<std::string> reasons;
  if (!AllFinite(candidate_losses)) {
    reasons.push_back("the candidate's loss is not finite");
  } else if (!(*v.loss_diff <= *v.loss_bound)) {
    reasons.push_back(
        fmt::format("its losses differ from the reference's by up to {:.2e} (relative), over the "
                    "bound {:.2e}",
                    *v.loss_diff, *v.loss_bound));
  }
  if (!weights_diff) {
    reasons.push_back("its weights could not be compared");
  } else if (!(*weights_diff <= *v.weight_bound)) {
    reasons.push_back(
        fmt::format("its weights differ from the reference's by {:.2e} of the update, over the bound "
                    "{:.2e}",
                    *weights_diff, *v.weight_bound));
  }
  for (const auto& r : reasons) v.reason += (v.reason.empty() ? "" : "; ") + r;
  v.ok = v.reason.empty();
  return v;
}

StepCheckResult CheckStep(const json& candidate, const json& without, const spec::SchemaSet& schemas,
                          const StepCheckOptions& options) {
  fs::create_directories(options.work_dir);
  auto store = store::Store::Open((fs::path(options.work_dir) / "check.db").string());
  const auto dir = [&](const std::string& role) { return (fs::path(options.work_dir) / role).string(); };
  const int steps = options.steps;

  // Which technique is under check, for the descriptions: what candidate has and without lacks.
  std::string checked;
  {
    json c = candidate, w = without;
    for (const auto& [name, _] : Optimizations(c).items())
      if (!Optimizations(w).contains(name)) checked += (checked.empty() ? "" : "+") + name;
  }
  json eager = Prepared(without, steps, dir("floor"));
  json reference = Prepared(without, steps, dir("reference"));
  reference["precision"] = "fp32";
  json initial = Prepared(reference, 1, dir("initial"));
  initial["train"]["optimizer"]["lr"] = 1e-12;  // one step that moves nothing: the weights all runs start from

  StepCheckResult result;
  result.runs.push_back(RunOne("initial", "the initial weights", initial, schemas, store, options));
  result.runs.push_back(RunOne("reference", Describe(reference, checked), reference, schemas, store, options));
  // The floor: the same training done another way that is the same arithmetic up to rounding.
  json floor = eager;
  std::string floor_what;
  if (Precision(eager) != "fp32") {
    floor_what = Describe(eager, checked);
  } else {
    floor = reference;
    floor["optimizations"]["export"]["dir"] = dir("floor");
    json with = candidate;  // channels_last's parameters as the trial has them, where it has them
    const json& cl =
        Optimizations(with).contains("channels_last") ? with["optimizations"]["channels_last"] : json::object();
    if (ChannelsLast(floor))
      floor["optimizations"].erase("channels_last");
    else
      floor["optimizations"]["channels_last"] = cl;
    floor_what = Describe(floor, checked) + " (the other memory format)";
  }
  const std::string floor_name = "the step " + floor_what;
  json cand = Prepared(candidate, steps, dir("candidate"));
  // A floor that is the candidate itself (channels_last checked in fp32) would bound it by itself.
  json same = floor;
  same["optimizations"]["export"]["dir"] = dir("candidate");
  const bool floor_is_candidate = same == cand;
  if (floor_is_candidate) {
    StepCheckRun skipped;
    skipped.role = "floor";
    skipped.what = floor_what;
    skipped.status = TrialStatus::kIncompatible;
    skipped.error = "not run: it is the candidate itself, so the bounds are the tolerance alone";
    result.runs.push_back(skipped);
  } else {
    result.runs.push_back(RunOne("floor", floor_what, floor, schemas, store, options));
  }
  result.runs.push_back(RunOne("candidate", Describe(cand, "") + ", with " + checked, cand, schemas, store, options));

  const StepCheckRun& i = result.runs[0];
  const StepCheckRun& r = result.runs[1];
  const StepCheckRun& f = result.runs[2];
  const StepCheckRun& c = result.runs[3];
  StepCheckVerdict& v = result.verdict;
  if (i.status != TrialStatus::kOk || r.status != TrialStatus::kOk) {
    const StepCheckRun& bad = i.status != TrialStatus::kOk ? i : r;
    v.could_not_tell = true;
    v.reason = fmt::format("the {} run ({}) ended {}: {}", bad.role, bad.what, Name(bad.status), bad.error);
    return result;
  }
  if (c.status != TrialStatus::kOk) {
    v.reason = fmt::format("the candidate run ended {}: {}", Name(c.status), c.error);
    return result;
  }
  std::string unreadable;  // why the candidate's weights could not be compared
  const auto distance = [&](const StepCheckRun& run, std::string* error) -> std::optional<double> {
    try {
      return UpdateRelativeDistance(r.weights, run.weights, i.weights);
    } catch (const std::runtime_error& e) {
      if (error) *error = e.what();
      return std::nullopt;
    }
  };
  std::optional<std::vector<double>> floor_losses;
  std::optional<double> floor_weights;
  if (f.status == TrialStatus::kOk) {
    floor_losses = f.losses;
    floor_weights = distance(f, nullptr);
  }
  v = JudgeStep(Precision(cand) == "fp32", r.losses, c.losses, distance(c, &unreadable), floor_name, floor_losses,
                floor_weights);
  if (!unreadable.empty()) v.reason += ": " + unreadable;
  return result;
}

}  // namespace runx::engine
