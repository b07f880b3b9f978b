#include "cli/step_check_text.h"

#include <fmt/format.h>

namespace runx::cli {
namespace {

std::string Figure(const std::optional<double>& x) { return x ? fmt::format("{:.2e}", *x) : "-"; }

}  // namespace

std::string StepCheckWord(const engine::StepCheckVerdict& verdict) {
  return verdict.ok ? "ok" : verdict.could_not_tell ? "cannot tell" : "FAILED";
}

std::string FormatStepCheck(const engine::StepCheckResult& result, int steps, const std::string& indent) {
  std::string out;
  for (const auto& run : result.runs) {
    const bool skipped = run.experiment.empty();  // a run the check did not need
    out += fmt::format("{}{:<10} {}: {}", indent, run.role, run.what,
                       run.status == TrialStatus::kOk ? "ok"
                       : skipped                      ? run.error
                                                      : std::string(Name(run.status)));
    if (run.status != TrialStatus::kOk && !skipped && !run.error.empty()) out += " (" + run.error + ")";
    out += "\n";
  }
  const auto& v = result.verdict;
  if (v.loss_diff) {
    const auto bound = [&](const std::optional<double>& floor) {
      return v.floor_name.empty()
                 ? fmt::format("the tolerance {:.0e}: no floor ran", v.tolerance)
                 : fmt::format("the larger of {:.0e} and 2x the floor's {}", v.tolerance, Figure(floor));
    };
    out += fmt::format(
        "{}losses over {} steps: the candidate's worst relative difference from the reference {}, "
        "bound {} ({})\n",
        indent, steps, Figure(v.loss_diff), Figure(v.loss_bound), bound(v.loss_floor));
    out += fmt::format(
        "{}weights after {} steps: |candidate - reference| = {} of the update |reference - initial|, "
        "bound {} ({})\n",
        indent, steps, Figure(v.weight_diff), Figure(v.weight_bound), bound(v.weight_floor));
  }
  out += fmt::format("{}{}{}\n", indent, StepCheckWord(v), v.reason.empty() ? "" : ": " + v.reason);
  return out;
}

}  // namespace runx::cli
