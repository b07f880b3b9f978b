#include "trial/setup.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include "plugins/loader.h"
#include "spec/identity.h"
#include "trial/trial.h"

namespace runx::engine {

TrialTechniques PlanTechniques(const nlohmann::json& config, const plugins::Registry& registry, c10::Device device) {
  TrialTechniques t;
  const auto configured = spec::ResolvedTechniques(config);
  for (const auto& [name, params] : configured.items()) {
    try {
      t.active.push_back({name, registry.Create(name, params)});
    } catch (const std::exception& e) {
      throw TechniqueFailure(fmt::format("technique '{}': {}", name, e.what()));
    }
  }
  const TrialPlan as_configured(config, device, configured);
  nlohmann::json resolved = nlohmann::json::object();
  for (auto& a : t.active) {
    try {
      resolved[a.name] = a.technique->resolve(configured[a.name], as_configured);
    } catch (const std::exception& e) {
      throw TechniqueFailure(fmt::format("technique '{}' failed in resolve: {}", a.name, e.what()));
    }
  }
  t.plan = std::make_unique<TrialPlan>(config, device, std::move(resolved));
  return t;
}

std::optional<std::string> CheckTechniques(const TrialTechniques& techniques) {
  for (const auto& a : techniques.active) {
    CheckResult verdict;
    try {
      verdict = a.technique->check(*techniques.plan);
    } catch (const std::exception& e) {
      throw TechniqueFailure(fmt::format("technique '{}' failed in check: {}", a.name, e.what()));
    }
    if (!verdict.ok) return fmt::format("{}: {}", a.name, verdict.reason);
  }
  return std::nullopt;
}

std::optional<std::string> CreateTechniques(const nlohmann::json& config, const plugins::Registry& registry,
                                            c10::Device device, std::vector<ActiveTechnique>& active,
                                            std::map<std::string, std::string>& environment) {
  TrialTechniques t = PlanTechniques(config, registry, device);
  if (auto refusal = CheckTechniques(t)) return refusal;
  for (auto& a : t.active) {
    environment["plugin." + a.name] = registry.Find(a.name)->descriptor->version;
    environment["technique." + a.name] = t.plan->technique(a.name)->dump();
    active.push_back(std::move(a));
  }
  return std::nullopt;
}

void SetNumerics(const spec::TrialConfig& trial, c10::Device device, uint64_t seed) {
  torch::manual_seed(seed);
  // The process's own count when the trial gives none: a trial run in-process after one with
  // `threads` gets LibTorch's choice back.
  static const int kDefaultThreads = at::get_num_threads();
  const int threads = trial.threads.value_or(kDefaultThreads);
  if (threads != at::get_num_threads()) at::set_num_threads(threads);
  if (device.is_cuda()) {
    at::globalContext().setBenchmarkCuDNN(true);
    at::globalContext().setAllowTF32CuBLAS(trial.precision == spec::Precision::kTf32);
  }
}

}  // namespace runx::engine
