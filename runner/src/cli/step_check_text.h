#pragma once
// The text of a step check (worker/step_check.h), shared by runx verify and runx compile.
#include <string>

#include "worker/step_check.h"

namespace runx::cli {

/// "ok", "FAILED" or "cannot tell".
std::string StepCheckWord(const engine::StepCheckVerdict& verdict);

/// The runs and the figures, each line indented by `indent`, ending in a newline.
std::string FormatStepCheck(const engine::StepCheckResult& result, int steps, const std::string& indent);

}  // namespace runx::cli
