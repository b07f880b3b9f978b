// Handing a command to the worker (runx-worker): the same arguments, by exec, so that the worker
// is the command (its output, exit status, signals and pid are the command's).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command_table.h"
#include "cli/commands.h"
#include "sweep/child.h"

namespace runx::cli {

int HandToWorker() {
  const std::string worker = engine::WorkerPath();
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
             "the commands that run LibTorch (compile, verify, doctor, plugins, data pack, run --in-process) and every "
             "trial run in it; it is built and installed beside runx (set RUNX_WORKER to use another)\n",
             worker, std::strerror(error));
  return kExitFailed;
}

}  // namespace runx::cli
