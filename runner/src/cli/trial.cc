// The internal commands of runx-worker: `trial` (one trial, or one rank of one, in this process,
// for the sweep that started it: worker/child.h) and `prepare` (a sweep's trials identified and
// checked: worker/prepare.h); and `run --in-process`'s trials.
#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cli/command_table.h"
#include "cli/commands.h"
#include "worker/child.h"
#include "worker/prepare.h"

namespace runx::cli {

int Trial(const engine::TrialChildArgs& args) { return engine::TrialChildMain(args); }

int Prepare() {
  try {
    std::ostringstream request;
    request << std::cin.rdbuf();
    const std::string answer = engine::PrepareTrials(nlohmann::json::parse(request.str()))
                                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::fflush(stdout);  // anything printed while the plugins loaded comes first: the answer is the last line
    std::fputs((answer + "\n").c_str(), stdout);
    std::fflush(stdout);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kExitFailed;
  }
  return kExitOk;
}

std::function<store::TrialRecord(const nlohmann::json&)> TrialsInThisProcess() { return engine::RunTrialHere; }

}  // namespace runx::cli
