#pragma once
// Data parallelism's view of a data source: each rank trains on its own slice of every global
// batch, so that N ranks at batch B each see exactly what one process at batch N*B sees.
#include <cstdint>
#include <memory>

#include "data/data.h"

namespace runx::data {

/// The rows [begin, begin + size) of a global batch of `global_batch` samples that `rank` of
/// `world` trains on: contiguous, disjoint, in rank order, covering the batch. Throws
/// std::invalid_argument when the batch does not split into `world` equal shards.
struct ShardRange {
  int64_t begin = 0, size = 0;
};
ShardRange ShardOf(int64_t global_batch, int rank, int world);

/// Wraps a source that makes global batches: hands out this rank's shard of each (a view, no
/// copy). batch_size() is the rank's share; the held-out split stays whole (rank 0 evaluates).
std::unique_ptr<DataSource> ShardSource(std::unique_ptr<DataSource> global, int rank, int world);

}  // namespace runx::data
