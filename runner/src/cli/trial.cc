// The internal `trial` of runx-worker: one trial (or one rank of one) in this process, for the
// sweep that started it (engine/child.h).
#include "cli/commands.h"
#include "engine/child.h"

namespace runx::cli {

int Trial(const engine::TrialChildArgs& args) { return engine::TrialChildMain(args); }

}  // namespace runx::cli
