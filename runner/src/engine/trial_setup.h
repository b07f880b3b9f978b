#pragma once
// The setup phase of a trial: techniques created, configured and checked, seed and numerics set.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "engine/trial_context.h"

namespace runx::plugins { class Registry; }

namespace runx::engine {

/// Creates and configures the techniques `config` turns on (spec::ResolvedTechniques), in order, and
/// asks each whether it can serve the trial on `device`; records "plugin.NAME" -> the plugin's
/// version in `environment` for each accepted one. Returns the first refusal as "name: reason"
/// (the techniques after it are not created), nullopt when all accept. A technique that cannot be
/// created or configured throws TechniqueFailure.
std::optional<std::string> CreateTechniques(const nlohmann::json& config, const plugins::Registry& registry,
                                            c10::Device device, std::vector<ActiveTechnique>& active,
                                            std::map<std::string, std::string>& environment);

/// The seed of everything the runner seeds (data, initial weights): determinism's own seed when
/// it sets one, else the experiment's (0 when absent).
uint64_t TrialSeed(const nlohmann::json& config);

/// Global numerics: the seed, PyTorch's defaults, plus on CUDA cuDNN autotuning for the fixed
/// shapes of a trial and TF32 matmuls when `precision` is tf32.
void SetNumerics(const nlohmann::json& config, c10::Device device, uint64_t seed);

}  // namespace runx::engine
