#include "engine/trial_setup.h"

#include <ATen/Context.h>

#include "engine/trial.h"
#include "plugins/loader.h"
#include "spec/identity.h"

namespace runx::engine {

std::optional<std::string> CreateTechniques(const nlohmann::json& config, const plugins::Registry& registry,
                                            c10::Device device, std::vector<ActiveTechnique>& active,
                                            std::map<std::string, std::string>& environment) {
  const auto techniques = spec::ResolvedTechniques(config);
  for (auto& [name, params] : techniques.items()) {
    try {
      active.push_back({name, registry.Create(name, params)});
    } catch (const std::exception& e) {
      throw TechniqueFailure(fmt::format("technique '{}': {}", name, e.what()));
    }
    auto verdict = active.back().technique->check(config, device);
    if (!verdict.ok) return fmt::format("{}: {}", name, verdict.reason);
    environment["plugin." + name] = registry.Find(name)->descriptor->version;
  }
  return std::nullopt;
}

uint64_t TrialSeed(const nlohmann::json& config) {
  const auto effective = spec::ResolvedTechniques(config);
  return effective.contains("determinism") && effective["determinism"].contains("seed")
             ? effective["determinism"]["seed"].get<uint64_t>()
             : config.value("seed", uint64_t{0});
}

void SetNumerics(const nlohmann::json& config, c10::Device device, uint64_t seed) {
  torch::manual_seed(seed);
  if (device.is_cuda()) {
    at::globalContext().setBenchmarkCuDNN(true);
    at::globalContext().setAllowTF32CuBLAS(config.value("precision", "fp32") == "tf32");
  }
}

}  // namespace runx::engine
