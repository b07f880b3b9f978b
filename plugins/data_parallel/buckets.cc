#include "buckets.h"

namespace runx::data_parallel {

std::vector<std::vector<size_t>> AssignBuckets(const std::vector<GradSlot>& slots, int64_t cap, int64_t first_cap) {
  std::vector<std::vector<size_t>> buckets;
  std::vector<size_t> open;
  int64_t bytes = 0;
  const auto close = [&] {
    if (open.empty()) return;
    buckets.push_back(std::move(open));
    open.clear();
    bytes = 0;
  };
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!open.empty() && slots[open.front()].kind != slots[i].kind) close();
    open.push_back(i);
    bytes += slots[i].bytes;
    if (bytes >= (buckets.empty() ? first_cap : cap)) close();
  }
  close();
  return buckets;
}

std::vector<size_t> LaunchableBuckets(const std::vector<bool>& complete, size_t& next) {
  std::vector<size_t> start;
  while (next < complete.size() && complete[next]) start.push_back(next++);
  return start;
}

}  // namespace runx::data_parallel
