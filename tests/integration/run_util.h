#pragma once
// Runs the real runx binary and captures what it prints.
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

namespace runx::testing {

struct Result {
  int status;
  std::string out;  // stdout and stderr together
  double seconds;
};

inline Result Runx(const std::string& args) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string cmd = std::string(RUNX_BIN) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int rc = pclose(p);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), out,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

}  // namespace runx::testing
