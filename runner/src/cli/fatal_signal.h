#pragma once
// A process that dies of a signal says where first: runx itself (never a trial: those run in child
// processes, and their crash is a result) and runx_unit_test, whose GoogleTest reports nothing when
// a test segfaults. Header-only so that the test binary, which does not link the command line,
// installs the same handler.
//
// What it prints, in async-signal-safe writes to stderr (except where noted):
//   PREFIX: internal error: segmentation fault; backtrace:      (or "fatal signal (NAME)")
//   [the context line, when a context function is given: e.g. the running test's name]
//   address 0x.. pc 0x.. return-address 0x.. thread 0x.. process 0x..
//   [/proc/self/maps, when RUNX_CRASH_MAPS is set: where each library is mapped, to place the pc]
//   the native frames (backtrace_symbols_fd; resolve with `addr2line -f -e BINARY` or the
//   library's own offsets)
// then it dies with the same signal (SA_RESETHAND), so the exit status still says which.
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace runx::cli {

inline void SayOnStderr(const char* s) { (void)!write(STDERR_FILENO, s, std::strlen(s)); }

namespace fatal_signal_detail {

inline const char* prefix = "runx";
inline void (*context)() = nullptr;

inline void WriteHex(const char* label, uintptr_t v) {
  char buf[32];
  int i = 31;
  buf[i--] = ' ';
  do {
    buf[i--] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v && i > 2);
  buf[i--] = 'x';
  buf[i] = '0';
  SayOnStderr(label);
  (void)!write(STDERR_FILENO, buf + i, 32 - i);
}

inline void OnFatalSignal(int sig, siginfo_t* info, void* ucontext) {
  SayOnStderr(prefix);
  if (sig == SIGSEGV) {
    SayOnStderr(": internal error: segmentation fault; backtrace:\n");
  } else {
    SayOnStderr(": internal error: fatal signal (");
    SayOnStderr(strsignal(sig));  // not async-signal-safe: the process is ending anyway
    SayOnStderr("); backtrace:\n");
  }
  if (context) context();
  WriteHex("address ", reinterpret_cast<uintptr_t>(info->si_addr));
#if defined(__linux__) && defined(__x86_64__)
  const auto& regs = static_cast<ucontext_t*>(ucontext)->uc_mcontext.gregs;
  WriteHex("pc ", static_cast<uintptr_t>(regs[REG_RIP]));
  // A call through a null pointer leaves pc 0 and the caller's return address on top of the stack.
  WriteHex("return-address ", *reinterpret_cast<const uintptr_t*>(regs[REG_RSP]));
  WriteHex("thread ", static_cast<uintptr_t>(syscall(SYS_gettid)));
  WriteHex("process ", static_cast<uintptr_t>(getpid()));
#else
  (void)ucontext;
#endif
  SayOnStderr("\n");
  if (std::getenv("RUNX_CRASH_MAPS")) {
    const int fd = open("/proc/self/maps", O_RDONLY);
    char chunk[4096];
    for (ssize_t n; fd >= 0 && (n = read(fd, chunk, sizeof chunk)) > 0;) (void)!write(STDERR_FILENO, chunk, n);
    if (fd >= 0) close(fd);
  }
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  raise(sig);  // SA_RESETHAND restored the default action
}

}  // namespace fatal_signal_detail

/// Installs the handler for SIGSEGV, SIGBUS, SIGFPE and SIGILL (and SIGABRT where `abort_too`: a
/// test binary, where an abort is as silent as a segfault). `context`, if given, writes one more
/// line after the first (with SayOnStderr).
inline void InstallFatalSignalHandler(const char* prefix, void (*context)() = nullptr, bool abort_too = false) {
  fatal_signal_detail::prefix = prefix;
  fatal_signal_detail::context = context;
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    if (sig == SIGABRT && !abort_too) continue;
    struct sigaction sa {};
    sa.sa_sigaction = fatal_signal_detail::OnFatalSignal;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace runx::cli
