// A test that dies of a signal (a segfault in a LibTorch build this machine cannot run) says which
// test it was and where: the test's name and the native stack, as addresses that `addr2line -f -e
// runx_unit_test` or the library's own offsets resolve. GoogleTest reports nothing of its own then;
// the process just ends after "[ RUN ]". Installed before main by a static initializer.
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

namespace {

void Say(const char* s) { [[maybe_unused]] auto n = write(STDERR_FILENO, s, std::strlen(s)); }

void OnFatalSignal(int sig) {
  Say("\n*** fatal signal ");
  Say(strsignal(sig));  // not async-signal-safe, like the test's name below: the process is ending anyway
  if (const auto* t = ::testing::UnitTest::GetInstance()->current_test_info()) {
    Say(" in ");
    Say(t->test_suite_name());
    Say(".");
    Say(t->name());
  }
  Say("; the stack:\n");
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  signal(sig, SIG_DFL);  // the default action next: the exit status still says which signal
  raise(sig);
}

const bool kInstalled = [] {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, OnFatalSignal);
  return true;
}();

}  // namespace
