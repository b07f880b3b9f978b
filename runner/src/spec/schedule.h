#pragma once
// The order trials run in, and the shards of a plan. No LibTorch here.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spec/plan.h"

namespace runx::spec {

/// (variant, repeat) of each trial of `variants` x `repeats`, in the order they run:
/// interleaved: every variant in turn, `repeats` rounds (0 1 2 | 0 1 2), so that drift of the
///   machine hits every variant alike;
/// shuffled: the same rounds, each a permutation of the variants seeded by `seed` and the round;
/// sequential: all repeats of a variant, then the next (0 0 | 1 1 | 2 2).
std::vector<std::pair<int, int>> Schedule(TrialOrder order, int variants, int repeats, uint64_t seed);

/// The trials of shard `spec` ("i/n", 0 <= i < n): those with order_index % n == i. Throws
/// std::invalid_argument with a message for the user when `spec` is malformed.
Plan Shard(const Plan& plan, const std::string& spec);

}  // namespace runx::spec
