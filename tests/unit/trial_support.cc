#include "trial_support.h"

#include <algorithm>
#include <cmath>

namespace runx::testing {

nlohmann::json TinyConfig(nlohmann::json extra) {
  nlohmann::json c = {{"name", "tiny"},
                      {"device", "cpu"},
                      {"seed", 3},
                      {"precision", "fp32"},
                      {"model", {{"name", "cnn"}, {"channels", {4, 8}}}},
                      {"data", {{"source", "synthetic"}, {"shape", {3, 8, 8}}, {"num_classes", 5}, {"batch_size", 4}}},
                      {"train", {{"warmup_steps", 2}, {"steps", 6}, {"optimizer", {{"name", "sgd"}, {"lr", 0.05}}}}},
                      {"optimizations", nlohmann::json::object()}};
  c.merge_patch(extra);
  return c;
}

const plugins::Registry& TestPlugins() {
  static const auto r = plugins::Registry::Discover({RUNX_PLUGIN_BUILD_DIR, RUNX_TEST_PLUGIN_GOOD_DIR});
  return r;
}

double MetricOf(const store::TrialRecord& r, const std::string& name) {
  for (const auto& m : r.metrics)
    if (m.name == name && !m.step) return m.value;
  return std::nan("");
}

TrialHarness::TrialHarness(nlohmann::json c)
    : config(std::move(c)),
      trial(spec::TrialConfig::From(config)),
      ctx(config, trial, torch::kCPU, rec, notes, active) {}

Step LoggingTechnique::wrap_step(Step step, TrialContext&) {
  Log("wrap_step");
  auto inner = std::move(step.forward);
  step.forward = [this, inner](Batch& b) {
    Log("forward");
    return inner(b);
  };
  return step;
}

void LoggingTechnique::on_step_end(const StepStats& s, TrialContext& trial) {
  Log(s.warmup ? "on_step_end:warmup" : "on_step_end");
  if (s.step == abort_at) trial.abort(TrialStatus::kFailed, "stopped by the test");
}

void AddTechnique(TrialHarness& h, const std::string& name, std::unique_ptr<Technique> t) {
  h.active.push_back({name, std::move(t)});
}

int Count(const std::vector<std::string>& log, const std::string& entry) {
  return static_cast<int>(std::count(log.begin(), log.end(), entry));
}

Batch FixedData::Next() {
  std::vector<int64_t> shape{batch_};
  shape.insert(shape.end(), shape_.begin(), shape_.end());
  return {torch::ones(shape), torch::zeros({batch_}, torch::kLong)};
}

}  // namespace runx::testing
