#pragma once
// The setup phase of a trial: techniques created, configured and checked, seed and numerics set.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "spec/trial_config.h"
#include "trial/context.h"

namespace runx::plugins {
class Registry;
}

namespace runx::engine {

/// The techniques of one trial: created, configured, and their settings resolved for the trial.
struct TrialTechniques {
  std::vector<ActiveTechnique> active;  ///< in the order their hooks run
  std::unique_ptr<TrialPlan> plan;      ///< the trial as check() sees it (refers to the config)
};

/// Creates and configures the techniques `config` turns on (spec::ResolvedTechniques) and asks
/// each for its resolved settings (Technique::resolve) on `device`. A technique that cannot be
/// created, configured or resolved throws TechniqueFailure naming it.
TrialTechniques PlanTechniques(const nlohmann::json& config, const plugins::Registry& registry, c10::Device device);

/// Asks every technique of `techniques` whether it can serve the trial (Technique::check on the
/// resolved plan); returns the first refusal as "name: reason", nullopt when all accept.
std::optional<std::string> CheckTechniques(const TrialTechniques& techniques);

/// PlanTechniques then CheckTechniques, for the trial that runs: moves the techniques into
/// `active` and records "plugin.NAME" -> the plugin's version and "technique.NAME" -> its resolved
/// settings (JSON) in `environment`. Returns the first refusal, nullopt when all accept.
std::optional<std::string> CreateTechniques(const nlohmann::json& config, const plugins::Registry& registry,
                                            c10::Device device, std::vector<ActiveTechnique>& active,
                                            std::map<std::string, std::string>& environment);

/// Global numerics: the seed, the CPU's intra-op threads (`threads`, else the process's
/// default), PyTorch's defaults, plus on CUDA cuDNN autotuning for the fixed
/// shapes of a trial and TF32 matmuls when `precision` is tf32. `seed` is the trial's
/// (spec::TrialConfig::trial_seed: determinism's own when it sets one).
void SetNumerics(const spec::TrialConfig& trial, c10::Device device, uint64_t seed);

}  // namespace runx::engine
