#include "worker/child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/files.h"
#include "outcome/record_json.h"
#include "plugins/loader.h"
#include "trial/data_parallel.h"
#include "trial/trial.h"

namespace runx::engine {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

/// The exit status of a data-parallel rank (not rank 0) whose trial did not end ok.
constexpr int kFailedRankExit = 3;

}  // namespace

std::string SelfExe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("runx") : p.string();
}

store::TrialRecord RunTrialHere(const nlohmann::json& config) {
  return RunTrial(config, plugins::Registry::Discover(plugins::PluginDirs()), {});
}

int TrialChildMain(const TrialChildArgs& args) {
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a runx that was killed...
#endif
  if (args.parent_pid > 0 && getppid() != args.parent_pid) return 1;  // ...even one killed before this line
  const std::string& progress_path = args.progress_path;
  TrialOptions options;
  if (args.ranks_from_env) {
    options.rank = RoleFromEnvironment(args.rendezvous);
  } else if (args.world_size > 0) {
    options.rank = RankRole{args.rank, args.world_size, 0, args.rendezvous, true};
    options.rank->local_rank = args.rank;
  }
  const bool leader = !options.rank || options.rank->rank == 0;  // reports progress, writes the record
  const std::string out_path = leader ? args.out_path : fmt::format("{}.rank{}", args.out_path, options.rank->rank);
  const auto config = nlohmann::json::parse(base::ReadFile(args.config_path).value_or(""));
  const auto registry = plugins::Registry::Discover(plugins::PluginDirs());
  volatile int64_t* shared = nullptr;
  if (!progress_path.empty() && leader) {
    const int fd = open(progress_path.c_str(), O_RDWR);
    if (fd >= 0) {
      void* p = mmap(nullptr, 2 * sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      close(fd);
      if (p != MAP_FAILED) shared = static_cast<volatile int64_t*>(p);
    }
  }
  if (shared) {
    options.on_step = [shared](int64_t done, int64_t total) {
      shared[1] = total;
      shared[0] = done;
    };
  }
  options.progress_every = 1;
  auto last = Clock::now() - std::chrono::seconds(1);
  if (leader)
    options.on_progress = [&last](const Progress& p) {
      const auto now = Clock::now();
      if (p.step != p.total && now - last < std::chrono::milliseconds(250)) return;
      last = now;
      nlohmann::json ev{{"event", "progress"},
                        {"step", p.step},
                        {"total", p.total},
                        {"warmup", p.warmup},
                        {"peak_mem_bytes", p.peak_mem_bytes}};
      if (!std::isnan(p.loss)) ev["loss"] = p.loss;
      std::fputs((ev.dump() + "\n").c_str(), stdout);
      std::fflush(stdout);
    };
  const auto record = RunTrial(config, registry, options);
  // Error texts may hold bytes that are not UTF-8 (a file name, a library message): replaced, not fatal.
  // A record that cannot be written whole is not written: the parent says the child left none.
  base::WriteFileAtomicallyOrThrow(out_path,
                                   ToJson(record).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  // A rank other than 0 that failed says so by its exit status, so that runx ends the other ranks
  // (they would wait for it in the next collective) and reports its record.
  return leader || record.status == TrialStatus::kOk ? 0 : kFailedRankExit;
}

}  // namespace runx::engine
