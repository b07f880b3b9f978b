#include "spec/schedule.h"

#include <stdexcept>

#include <fmt/format.h>

#include "spec/issue.h"

namespace runx::spec {
namespace {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<std::pair<int, int>> Schedule(TrialOrder order, int variants, int repeats, uint64_t seed) {
  std::vector<std::pair<int, int>> sequence;
  sequence.reserve(static_cast<size_t>(variants) * static_cast<size_t>(repeats));
  if (order == TrialOrder::kSequential) {
    for (int v = 0; v < variants; ++v)
      for (int r = 0; r < repeats; ++r) sequence.emplace_back(v, r);
    return sequence;
  }
  for (int r = 0; r < repeats; ++r) {
    std::vector<int> round(static_cast<size_t>(variants));
    for (int v = 0; v < variants; ++v) round[static_cast<size_t>(v)] = v;
    if (order == TrialOrder::kShuffled) {
      uint64_t state = seed ^ (0xd1b54a32d192ed03ULL * static_cast<uint64_t>(r + 1));
      for (size_t i = round.size(); i > 1; --i) std::swap(round[i - 1], round[SplitMix64(&state) % i]);
    }
    for (const int v : round) sequence.emplace_back(v, r);
  }
  return sequence;
}

Plan Shard(const Plan& plan, const std::string& spec) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(fmt::format("invalid shard {}: {}", Quote(spec), why));
  };
  const size_t slash = spec.find('/');
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (slash == std::string::npos || !digits(spec.substr(0, slash)) || !digits(spec.substr(slash + 1)))
    throw bad("expected 'i/n', shard i of n counted from 0, e.g. '0/4'");
  const int index = std::stoi(spec.substr(0, slash)), count = std::stoi(spec.substr(slash + 1));
  if (count < 1) throw bad("the shard count must be at least 1");
  if (index >= count)
    throw bad(fmt::format("the shard index must be less than the count {} (shards are counted from 0)", count));
  Plan out = plan;
  out.trials.clear();
  for (const auto& t : plan.trials)
    if (t.order_index % count == index) out.trials.push_back(t);
  out.shard_index = index;
  out.shard_count = count;
  return out;
}

}  // namespace runx::spec
