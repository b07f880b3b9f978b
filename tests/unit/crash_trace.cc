// A test that dies of a signal (a segfault in a LibTorch build this machine cannot run) says which
// test it was and where, with runx's own handler (cli/fatal_signal.h): the test's name, pc and
// return address, and the native stack. GoogleTest reports nothing of its own then; the process
// just ends after "[ RUN ]". Installed before main by a static initializer.
#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include "cli/fatal_signal.h"

namespace {

void NameTheTest() {
  using runx::cli::SayOnStderr;
  if (const auto* t = ::testing::UnitTest::GetInstance()->current_test_info()) {
    SayOnStderr("in test ");
    SayOnStderr(t->test_suite_name());  // not async-signal-safe: the process is ending anyway
    SayOnStderr(".");
    SayOnStderr(t->name());
    SayOnStderr("\n");
  }
}

const bool kInstalled = [] {
  runx::cli::InstallFatalSignalHandler("runx_unit_test", NameTheTest, /*abort_too=*/true);
  return true;
}();

// The handler runx and this binary install: a segfault names the test and where, then ends the
// process with the same signal (a death test runs it in a child).
TEST(FatalSignal, ASegfaultSaysWhereAndWhichTestThenDiesOfIt) {
#if defined(__linux__) && defined(__x86_64__)
  const char* where =
      "address 0x[0-9a-f]+ pc 0x[0-9a-f]+ return-address 0x[0-9a-f]+ thread 0x[0-9a-f]+ process 0x[0-9a-f]+";
#else
  const char* where = "address 0x[0-9a-f]+";
#endif
  EXPECT_EXIT(std::raise(SIGSEGV), ::testing::KilledBySignal(SIGSEGV),
              std::string("runx_unit_test: internal error: segmentation fault; backtrace:\n"
                          "in test FatalSignal\\.ASegfaultSaysWhereAndWhichTestThenDiesOfIt\n") +
                  where);
  EXPECT_EXIT(std::raise(SIGFPE), ::testing::KilledBySignal(SIGFPE),
              "runx_unit_test: internal error: fatal signal \\(Floating point exception\\); backtrace:");
}

}  // namespace
