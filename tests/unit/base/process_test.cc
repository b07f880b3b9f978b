#include "base/process.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "base/files.h"

namespace runx::base {
namespace {
namespace fs = std::filesystem;

std::string Read(const fs::path& p) { return ReadFile(p.string()).value_or("(unreadable)"); }

class Process : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_process_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) fs::remove(e.path(), ec);
    fs::remove(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(Process, RunsACommandAndKeepsBothStreams) {
  const auto r = RunProcess({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST_F(Process, ArgumentsReachTheProgramAsTheyAre) {
  const auto r = RunProcess({"printf", "[%s]", "a b", "$HOME", "'"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "[a b][$HOME][']");
}

// Much output on both streams at once: read together, neither pipe fills and stalls the child.
TEST_F(Process, ManyLinesOnBothStreams) {
  const auto r =
      RunProcess({"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 20000);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 20000);
}

// Input through stdin while the output is read: 4 MiB through `cat` (far more than a pipe holds)
// comes back whole; a program that reads none of it ends this process's writing with EPIPE, not
// SIGPIPE (which would end the test binary), and without one it reads /dev/null.
TEST_F(Process, InputGoesToStdinWhileTheOutputIsRead) {
  std::string input;
  for (int i = 0; input.size() < (4u << 20); ++i) input += "line " + std::to_string(i) + "\n";
  auto r = RunProcess({"cat"}, input);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.size(), input.size());
  EXPECT_TRUE(r.out == input);
  r = RunProcess({"/bin/sh", "-c", "exec 0<&-; echo closed"}, input);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "closed\n");
  r = RunProcess({"wc", "-c"});
  EXPECT_EQ(r.out, "0\n");
}

TEST_F(Process, AProgramThatIsNotThere) {
  const auto r = RunProcess({"runx-no-such-program-xyz"});
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.error, "not found on PATH");
  // A path is not looked up: the file itself is missing.
  const auto at = RunProcess({"/no/such/folder/runx-no-such-program-xyz"});
  EXPECT_FALSE(at.started);
  EXPECT_EQ(at.error, "No such file or directory");
  try {
    Spawn({"runx-no-such-program-xyz"});
    ADD_FAILURE() << "a missing program started";
  } catch (const SpawnError& e) {
    EXPECT_EQ(e.error(), ENOENT);
    EXPECT_EQ(std::string(e.what()), "cannot start 'runx-no-such-program-xyz': No such file or directory");
  }
}

TEST_F(Process, WaitForExitGivesTheStatusOr128PlusTheSignal) {
  EXPECT_EQ(WaitForExit(Spawn({"/bin/sh", "-c", "exit 3"})), 3);
  EXPECT_EQ(WaitForExit(Spawn({"/bin/sh", "-c", "exit 0"})), 0);
  const pid_t pid = Spawn({"sleep", "30"});
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_EQ(WaitForExit(pid), 128 + SIGKILL);
}

TEST_F(Process, StreamsGoWhereTheOptionsSay) {
  std::ofstream(dir_ / "in.txt") << "from a file\n";
  SpawnOptions options;
  options.in = SpawnStream::File((dir_ / "in.txt").string());
  options.out = SpawnStream::File((dir_ / "out.txt").string());
  options.err = SpawnStream::File((dir_ / "err.txt").string());
  EXPECT_EQ(WaitForExit(Spawn({"/bin/sh", "-c", "cat; echo to stderr >&2"}, options)), 0);
  EXPECT_EQ(Read(dir_ / "out.txt"), "from a file\n");
  EXPECT_EQ(Read(dir_ / "err.txt"), "to stderr\n");

  // stdin from /dev/null, stdout into a descriptor of this process, stderr discarded.
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  options = {};
  options.in = SpawnStream::Null();
  options.out = SpawnStream::Fd(fds[1]);
  options.err = SpawnStream::Null();
  const pid_t pid = Spawn({"/bin/sh", "-c", "cat; echo piped; echo lost >&2"}, options);
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  EXPECT_EQ(WaitForExit(pid), 0);
  EXPECT_EQ(out, "piped\n");
}

// argv[0] is the name the process sees; `program` is what runs.
TEST_F(Process, ProgramApartFromArgvZero) {
  SpawnOptions options;
  options.program = "/bin/sh";
  options.out = SpawnStream::File((dir_ / "out.txt").string());
  EXPECT_EQ(WaitForExit(Spawn({"runx-trial", "-c", "echo $0"}, options)), 0);
  EXPECT_EQ(Read(dir_ / "out.txt"), "runx-trial\n");
}

TEST_F(Process, EnvironmentIsSetOverThisProcesss) {
  setenv("RUNX_PROCESS_TEST_KEPT", "kept", 1);
  setenv("RUNX_PROCESS_TEST_SET", "old", 1);
  SpawnOptions options;
  options.out = SpawnStream::File((dir_ / "out.txt").string());
  options.env = {{"RUNX_PROCESS_TEST_SET", "new"}, {"RUNX_PROCESS_TEST_ADDED", "added"}};
  const std::string echo = "echo $RUNX_PROCESS_TEST_KEPT $RUNX_PROCESS_TEST_SET $RUNX_PROCESS_TEST_ADDED";
  EXPECT_EQ(WaitForExit(Spawn({"/bin/sh", "-c", echo}, options)), 0);
  unsetenv("RUNX_PROCESS_TEST_KEPT");
  unsetenv("RUNX_PROCESS_TEST_SET");
  EXPECT_EQ(Read(dir_ / "out.txt"), "kept new added\n");
}

TEST_F(Process, ANewProcessGroupThatItLeads) {
  SpawnOptions options;
  options.process_group = 0;
  const pid_t pid = Spawn({"sleep", "30"}, options);
  EXPECT_EQ(getpgid(pid), pid);
  kill(-pid, SIGKILL);  // the whole group, as the trial's parent ends it
  EXPECT_EQ(WaitForExit(pid), 128 + SIGKILL);
}

// A signal this process ignores is ignored by its children too, unless set back to its default.
TEST_F(Process, DefaultSignals) {
  struct sigaction ignore = {};
  struct sigaction previous = {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(sigaction(SIGTERM, &ignore, &previous), 0);
  const std::vector<std::string> argv{"/bin/sh", "-c", "kill -TERM $$; exit 0"};
  const int inherited = WaitForExit(Spawn(argv));
  SpawnOptions options;
  options.default_signals = true;
  const int defaults = WaitForExit(Spawn(argv, options));
  sigaction(SIGTERM, &previous, nullptr);
  EXPECT_EQ(inherited, 0);
  EXPECT_EQ(defaults, 128 + SIGTERM);
}

TEST_F(Process, ClosesOtherDescriptors) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
  const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int fd = fcntl(null, F_DUPFD, 50);  // no FD_CLOEXEC: a child would inherit it
  close(null);
  ASSERT_GE(fd, 50);
  const std::vector<std::string> argv{"/bin/sh", "-c", "test -e /proc/self/fd/" + std::to_string(fd)};
  const int inherited = WaitForExit(Spawn(argv));
  SpawnOptions options;
  options.close_other_fds = true;
  const int closed = WaitForExit(Spawn(argv, options));
  close(fd);
  EXPECT_EQ(inherited, 0);
  EXPECT_EQ(closed, 1);
#else
  GTEST_SKIP() << "posix_spawn_file_actions_addclosefrom_np needs glibc 2.34";
#endif
}

}  // namespace
}  // namespace runx::base
