// The commands that need LibTorch, as the runx binary (no LibTorch) runs them: by handing the
// whole command line to its worker, runx-worker, which runs it as runx would (cli/worker.cc).
// runx-worker defines these functions for real (compile.cc, verify.cc, doctor.cc, plugins.cc,
// data_pack.cc, trial.cc); docs/design.md, "Two binaries", says where the line runs and why.
#include "cli/commands.h"

namespace runx::cli {

int Compile(const CompileArgs&) { return HandToWorker(); }
int Verify(const VerifyArgs&) { return HandToWorker(); }
int Doctor(const std::string&) { return HandToWorker(); }
int Plugins(const std::string&) { return HandToWorker(); }
int DataPack(const data::PackRequest&) { return HandToWorker(); }
int Trial(const engine::TrialChildArgs&) { return HandToWorker(); }
int Prepare() { return HandToWorker(); }
std::function<store::TrialRecord(const nlohmann::json&)> TrialsInThisProcess() { return {}; }

}  // namespace runx::cli
