#include "spec/plan.h"

namespace runx::spec {

std::string Name(SweepMode mode) {
  switch (mode) {
    case SweepMode::kSingle:
      return "single";
    case SweepMode::kGrid:
      return "grid";
    case SweepMode::kAblation:
      return "ablation";
    case SweepMode::kAllSubsets:
      return "all_subsets";
  }
  return "single";
}

std::string Name(TrialOrder order) {
  switch (order) {
    case TrialOrder::kInterleaved:
      return "interleaved";
    case TrialOrder::kShuffled:
      return "shuffled";
    case TrialOrder::kSequential:
      return "sequential";
  }
  return "interleaved";
}

SweepMode ParseSweepMode(const std::string& name) {
  for (const SweepMode m : {SweepMode::kGrid, SweepMode::kAblation, SweepMode::kAllSubsets, SweepMode::kSingle})
    if (Name(m) == name) return m;
  return SweepMode::kGrid;  // the schema's default
}

TrialOrder ParseTrialOrder(const std::string& name) {
  for (const TrialOrder o : {TrialOrder::kInterleaved, TrialOrder::kShuffled, TrialOrder::kSequential})
    if (Name(o) == name) return o;
  return TrialOrder::kInterleaved;
}

}  // namespace runx::spec
