#pragma once
// Which gradients are all-reduced together. Pure logic, unit-tested (tests/unit/data_parallel_test.cc).
#include <cstdint>
#include <vector>

namespace runx::data_parallel {

/// One gradient as bucketing sees it.
struct GradSlot {
  int64_t bytes = 0;
  int kind = 0;  ///< dtype and device folded into one key: a bucket never mixes two kinds
};

/// Groups `slots`, listed in the order their gradients are expected to become ready (the reverse
/// of the parameters' registration order, as PyTorch DDP assumes), into buckets of consecutive
/// slots: a bucket is closed once it holds at least its cap in bytes (`first_cap` for the first
/// bucket, so that the first all-reduce starts early in the backward pass; `cap` for the rest),
/// or when the next slot is of another kind. A slot larger than the cap gets a bucket of its own
/// when it starts one. Returns the slots' indices per bucket, in launch order; every slot is in
/// exactly one bucket.
std::vector<std::vector<size_t>> AssignBuckets(const std::vector<GradSlot>& slots, int64_t cap, int64_t first_cap);

/// The buckets that may start now, in order: the launches are in bucket order on every rank (a
/// collective must be started in the same order everywhere), so bucket k starts only once every
/// bucket before it has. `complete[k]` says bucket k has all its gradients; `next` is the first
/// bucket not started yet and is advanced past the ones returned.
std::vector<size_t> LaunchableBuckets(const std::vector<bool>& complete, size_t& next);

}  // namespace runx::data_parallel
