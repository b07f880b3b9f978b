#pragma once
// Runs the real runx binary and captures what it prints.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

namespace runx::testing {

struct Result {
  int status;
  std::string out;  // stdout and stderr together
  double seconds;
};

/// Runs the shell command `command` (its stderr with its stdout).
inline Result Shell(const std::string& command) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string cmd = command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int rc = pclose(p);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), out,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

inline Result Runx(const std::string& args) { return Shell(std::string(RUNX_BIN) + " " + args); }

/// Starts `exe ARGS` in the background, its output discarded; returns its pid.
inline pid_t Spawn(const std::string& args, const std::string& exe = RUNX_BIN) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = exe + " " + args + " >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), nullptr);
    _exit(127);
  }
  return pid;
}

/// Waits for `pid`; its exit status, or 128 + the signal that ended it.
inline int Wait(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Polls `cond` every 50 ms for up to `seconds`; whether it became true.
inline bool WaitFor(const std::function<bool()>& cond, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace runx::testing
