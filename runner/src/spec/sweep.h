#pragma once
// The `sweep:` block: an experiment expanded into variants (grid / ablation / all_subsets), each
// run `repeats` times in a scheduled order; sharding; the text of `runx plan`. No LibTorch here.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/spec.h"

namespace runx::spec {

/// One run of one variant.
struct PlannedTrial {
  /// The resolved config of the variant: the experiment's config with the axis values applied,
  /// without `sweep`, `repeats`, `order`, `order_seed` and `trial_timeout_s` (they say how trials
  /// run, not what a trial is, so changing them keeps the hash and lets a sweep resume).
  nlohmann::json config;
  std::string config_hash;  ///< Sha256Hex(config.dump())
  std::string label;        ///< unique within the plan: "baseline", "bf16+channels_last", "batch_size=128"
  bool is_baseline = false;
  int variant_index = 0;    ///< 0 is the baseline
  int repeat_index = 0;     ///< 0 .. repeats-1
  int order_index = 0;      ///< position in the execution order of the whole (unsharded) plan
  std::string differs;      ///< "precision=bf16, +channels_last"; "" for the baseline
};

struct Plan {
  std::vector<PlannedTrial> trials;  ///< in execution order
  int variants = 1, repeats = 1;
  std::string mode = "single";       ///< single (no sweep) | grid | ablation | all_subsets
  std::string order = "interleaved"; ///< interleaved | shuffled | sequential
  uint64_t order_seed = 0;           ///< the seed of the shuffled order (given, or derived from `seed`)
  double trial_timeout_s = 3600;
  int shard_index = 0, shard_count = 1;  ///< set by Shard
};

/// Most variants a sweep may expand to (a larger one is an error at 'sweep.axes').
inline constexpr size_t kMaxVariants = 4096;

/// The trials of `exp` (a result of Load) in execution order. Throws SpecError, pointing into
/// the sweep block, when the sweep is invalid (Load already reports the same problems).
Plan Expand(const Experiment& exp, const SchemaSet& schemas);

/// The trials of shard `spec` ("i/n", 0 <= i < n): those with order_index % n == i. Throws
/// std::invalid_argument with a message for the user when `spec` is malformed.
Plan Shard(const Plan& plan, const std::string& spec);

/// What `runx plan FILE` prints: the variants (index, label, what differs from the baseline,
/// trials, baseline mark), the execution order, and the totals.
std::string RenderPlan(const Plan& plan);

}  // namespace runx::spec
