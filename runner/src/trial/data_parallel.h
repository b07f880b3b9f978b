#pragma once
// What the engine does for a data-parallel trial (the data_parallel technique): how many ranks
// the parent starts, and inside each rank its device, its process group and its figures.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <c10/core/Device.h>
#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "runx/collectives.h"
#include "spec/trial_config.h"
#include "trial/process_group.h"

namespace runx::engine {

/// The technique's name in `optimizations:`.
inline constexpr const char* kDataParallel = "data_parallel";

/// The rank this process is of `trial`: nullptr for a trial without data_parallel (one ordinary
/// trial process, whatever `rank` says), else `rank`, which the caller checks is set (a
/// data-parallel trial cannot run in runx's own process). How many ranks the trial has is
/// spec::TrialConfig::ranks().
const RankRole* RankOf(const spec::TrialConfig& trial, const std::optional<RankRole>& rank);

/// The device of `role`'s rank: on CUDA each rank takes its own GPU, the configured index plus
/// the rank's local index (cuda:0 -> rank r on cuda:r); the CPU is shared.
c10::Device RankDevice(c10::Device configured, const RankRole& role);

/// Joins the trial's process group with the backend the technique resolved (recorded in
/// `environment` as "technique.data_parallel") and records the rank's facts there. Throws when
/// `role` is not one of the trial's `world_size` ranks (the launcher started another number).
std::unique_ptr<Collectives> JoinRanks(const RankRole& role, int world_size, c10::Device device,
                                       std::map<std::string, std::string>& environment);

/// `values` (CPU doubles) averaged over the ranks, in place: the loss of each step as one process
/// at the global batch would see it.
void AverageOverRanks(Collectives& ranks, c10::Device device, torch::Tensor& values);

/// The sum of `value` over the ranks.
double SumOverRanks(Collectives& ranks, c10::Device device, double value);

}  // namespace runx::engine
