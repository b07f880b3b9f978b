#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ucontext.h>

#include <fcntl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli/commands.h"

namespace {

/// A crash of runx itself (never of a trial: those run in child processes) prints where it
/// happened before dying with the same signal, so that a bug report has a backtrace.
void WriteHex(const char* label, uintptr_t v) {
  char buf[32];
  int i = 31;
  buf[i--] = ' ';
  do {
    buf[i--] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v && i > 2);
  buf[i--] = 'x';
  buf[i] = '0';
  (void)!write(STDERR_FILENO, label, std::strlen(label));
  (void)!write(STDERR_FILENO, buf + i, 32 - i);
}

void OnFatalSignal(int sig, siginfo_t* info, void* context) {
  const char* what = sig == SIGSEGV ? "runx: internal error: segmentation fault; backtrace:\n"
                                    : "runx: internal error: fatal signal; backtrace:\n";
  (void)!write(STDERR_FILENO, what, std::strlen(what));
  WriteHex("address ", reinterpret_cast<uintptr_t>(info->si_addr));
#if defined(__linux__) && defined(__x86_64__)
  const auto& regs = static_cast<ucontext_t*>(context)->uc_mcontext.gregs;
  WriteHex("pc ", static_cast<uintptr_t>(regs[REG_RIP]));
  // A call through a null pointer leaves pc 0 and the caller's return address on top of the stack.
  WriteHex(" return-address ", *reinterpret_cast<const uintptr_t*>(regs[REG_RSP]));
  WriteHex(" thread ", static_cast<uintptr_t>(syscall(SYS_gettid)));
  WriteHex(" process ", static_cast<uintptr_t>(getpid()));
#else
  (void)context;
#endif
  (void)!write(STDERR_FILENO, "\n", 1);
  if (std::getenv("RUNX_CRASH_MAPS")) {  // where each library is mapped, to place the pc
    const int fd = open("/proc/self/maps", O_RDONLY);
    char chunk[4096];
    for (ssize_t n; fd >= 0 && (n = read(fd, chunk, sizeof chunk)) > 0;) (void)!write(STDERR_FILENO, chunk, n);
    if (fd >= 0) close(fd);
  }
  void* frames[64];
  const int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  raise(sig);  // SA_RESETHAND restored the default action
}

}  // namespace

int main(int argc, char** argv) {
  const bool trial_child = argc > 1 && std::strcmp(argv[1], "trial") == 0;  // its crash is a result
  if (!trial_child)
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
      struct sigaction sa {};
      sa.sa_sigaction = OnFatalSignal;
      sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
      sigaction(sig, &sa, nullptr);
    }
  try {
    return runx::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runx: internal error: %s\n", e.what());
    return 70;
  }
}
