// Misbehaves on purpose, in the hook and way its parameters say, to test that runx turns every
// kind of trial failure into a recorded result: segfault, abort, hang, oom (host allocation
// until std::bad_alloc under an address-space limit), nan (poisons the weights); in a data-parallel
// trial, on one rank only when `rank` says which.
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include <stdexcept>

#include "runx/plugin_export.h"

namespace {
class Crash : public runx::Technique {
 public:
  void configure(const nlohmann::json& p) override {
    mode_ = p.value("mode", "segfault");
    at_step_ = p.value("at_step", 2);
    rank_ = p.value("rank", -1);
  }
  void on_step_end(const runx::StepStats& s, runx::TrialContext& trial) override {
    if (s.step != at_step_) return;
    if (rank_ >= 0 && (!trial.collectives() || trial.collectives()->rank() != rank_)) return;
    if (mode_ == "segfault") std::raise(SIGSEGV);
    if (mode_ == "abort") std::abort();
    if (mode_ == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    if (mode_ == "throw") {  // a failure whose reason is not on its first line, like TorchScript's
      std::fputs("test_crash: a line the trial printed on stderr before failing\n", stderr);
      std::fflush(stderr);
      throw std::runtime_error(
          "The following operation failed in the test interpreter.\n"
          "Traceback of the test script:\n  the reason: tensor sizes 3 and 4 do not match");
    }
    if (mode_ == "oom") {
      // Allow this process 256 MiB more address space than it has, then allocate until refused.
      unsigned long pages = 0;
      if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%lu", &pages) != 1) pages = 0;
        std::fclose(f);
      }
      struct rlimit lim {};
      getrlimit(RLIMIT_AS, &lim);
      lim.rlim_cur = pages * 4096ul + (256ul << 20);
      setrlimit(RLIMIT_AS, &lim);
      std::vector<std::vector<char>> hog;
      for (;;) hog.emplace_back(64u << 20, 1);
    }
    if (mode_ == "nan") {
      torch::NoGradGuard g;
      for (auto& p : trial.model().parameters()) p.fill_(std::numeric_limits<float>::quiet_NaN());
    }
  }

 private:
  std::string mode_;
  int64_t at_step_ = 2;
  int rank_ = -1;  ///< a data-parallel trial: only this rank misbehaves (-1: every process)
};
}  // namespace

RUNX_PLUGIN(test_crash, "0.1.0", "test plugin: crashes, hangs, exhausts memory or poisons weights", Crash)
