#include "fake_trial.h"

#include <cmath>

#include "plugins/loader.h"

namespace runx::testing {

FakeTrial::FakeTrial(nlohmann::json config, std::shared_ptr<torch::nn::Module> model)
    : config_(std::move(config)), model_(std::move(model)),
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

}  // namespace runx::testing
