#pragma once
// The text of `runx plan`. No LibTorch here.
#include <string>

#include "spec/plan.h"

namespace runx::spec {

/// What `runx plan FILE` prints: the variants (index, label, what differs from the baseline,
/// trials, baseline mark), the execution order (the first 64 trials), and the totals.
std::string RenderPlan(const Plan& plan);

}  // namespace runx::spec
