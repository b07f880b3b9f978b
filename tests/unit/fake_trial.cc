#include "fake_trial.h"

#include <cmath>

#include "plugins/loader.h"
#include "trial/setup.h"

namespace runx::testing {

FakeTrial::FakeTrial(nlohmann::json config, std::shared_ptr<torch::nn::Module> model)
    : config_(std::move(config)),
      model_(std::move(model)),
      optimizer_(std::make_unique<torch::optim::SGD>(model_->parameters(), torch::optim::SGDOptions(0.1))) {}

double FakeTrial::Last(const std::string& name) const {
  for (auto it = metrics.rbegin(); it != metrics.rend(); ++it)
    if (it->name == name) return it->value;
  return std::nan("");
}

std::unique_ptr<Technique> LoadTechnique(const std::string& name, const nlohmann::json& params) {
  auto plugin = plugins::LoadPlugin(std::string(RUNX_PLUGIN_BUILD_DIR) + "/lib" + name + ".so");
  auto t = plugin.descriptor->create();
  t->configure(params);
  return t;
}

namespace {

const plugins::Registry& BuildRegistry() {
  static const plugins::Registry registry = plugins::Registry::Discover({RUNX_PLUGIN_BUILD_DIR});
  return registry;
}

/// `fn` on technique `name` and the plan of a trial of `config` that runs it with `params`.
template <typename Fn>
auto WithPlanned(const std::string& name, const nlohmann::json& params, nlohmann::json config, c10::Device device,
                 Fn&& fn) {
  if (!config.is_object()) config = nlohmann::json::object();
  config["optimizations"][name] = params;
  const engine::TrialTechniques t = engine::PlanTechniques(config, BuildRegistry(), device);
  for (const auto& a : t.active)
    if (a.name == name) return fn(*a.technique, *t.plan);
  throw std::logic_error("technique " + name + " was not planned");
}

}  // namespace

CheckResult Check(const std::string& name, const nlohmann::json& params, nlohmann::json config, c10::Device device) {
  return WithPlanned(name, params, std::move(config), device,
                     [](Technique& t, const TrialPlan& plan) { return t.check(plan); });
}

nlohmann::json Resolve(const std::string& name, const nlohmann::json& params, nlohmann::json config,
                       c10::Device device) {
  return WithPlanned(name, params, std::move(config), device,
                     [&](Technique&, const TrialPlan& plan) { return *plan.technique(name); });
}

}  // namespace runx::testing
