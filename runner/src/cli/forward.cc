// The commands that need LibTorch, as the runx binary (no LibTorch) runs them: by handing the
// whole command line to its worker, runx-worker, which runs it as runx would (the same command
// table, the same output, exit status and signals: exec replaces this process). runx-worker
// defines these functions for real (run.cc, compile.cc, verify.cc, doctor.cc, plugins.cc,
// data_pack.cc, trial.cc); docs/design.md, "Two binaries", says why the line runs here.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/install_dirs.h"
#include "cli/command_table.h"
#include "cli/commands.h"

namespace runx::cli {
namespace {

constexpr const char* kWorkerName = "runx-worker";

/// The worker: RUNX_WORKER when set, else runx-worker beside this runx (the build tree and the
/// installed bin/ alike).
std::string WorkerPath() {
  if (const char* own = std::getenv("RUNX_WORKER"); own && *own) return own;
  const std::string dir = base::ExecutableDir();
  return (dir.empty() ? std::string(".") : dir) + "/" + kWorkerName;
}

/// Replaces this process by the worker with runx's own arguments; returns only when it cannot.
int InWorker() {
  const std::string worker = WorkerPath();
  std::vector<std::string> words = ProcessArguments();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(worker.c_str()));
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execv(worker.c_str(), argv.data());
  const int error = errno;
  fmt::print(stderr,
             "runx: error: cannot start the runx worker '{}': {}\n"
             "the commands that run LibTorch (run, compile, verify, doctor, plugins, data pack) run in it; it is "
             "built and installed beside runx (set RUNX_WORKER to use another)\n",
             worker, std::strerror(error));
  return kExitFailed;
}

}  // namespace

int Run(const RunArgs&) { return InWorker(); }
int Compile(const CompileArgs&) { return InWorker(); }
int Verify(const VerifyArgs&) { return InWorker(); }
int Doctor(const std::string&) { return InWorker(); }
int Plugins(const std::string&) { return InWorker(); }
int DataPack(const data::PackRequest&) { return InWorker(); }
int Trial(const engine::TrialChildArgs&) { return InWorker(); }

}  // namespace runx::cli
