#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "cli/commands.h"

namespace {

/// A crash of runx itself (never of a trial: those run in child processes) prints where it
/// happened before dying with the same signal, so that a bug report has a backtrace.
void OnFatalSignal(int sig) {
  const char* what = sig == SIGSEGV ? "runx: internal error: segmentation fault; backtrace:\n"
                                    : "runx: internal error: fatal signal; backtrace:\n";
  (void)!write(STDERR_FILENO, what, std::strlen(what));
  void* frames[64];
  const int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  const bool trial_child = argc > 1 && std::strcmp(argv[1], "trial") == 0;  // its crash is a result
  if (!trial_child)
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, OnFatalSignal);
  return runx::cli::Main(argc, argv);
}
