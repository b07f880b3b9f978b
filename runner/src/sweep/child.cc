#include "sweep/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "base/cleanup.h"
#include "base/files.h"
#include "base/install_dirs.h"
#include "base/process.h"
#include "base/remove_tree.h"
#include "base/text.h"
#include "base/time.h"
#include "outcome/failure.h"
#include "outcome/record_json.h"
#include "spec/trial_config.h"

namespace runx::engine {
namespace fs = std::filesystem;
using base::UtcNow;

namespace {

using Clock = std::chrono::steady_clock;

/// The end of a child's stderr, at most kStderrTailBytes, under a heading; "" when it is empty.
constexpr size_t kStderrTailBytes = 16 * 1024;
std::string StderrTail(const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return "";
  const bool cut = text.size() > kStderrTailBytes;
  return fmt::format("--- the trial's stderr{} ---\n{}", cut ? fmt::format(" (last {} bytes)", kStderrTailBytes) : "",
                     cut ? text.substr(text.size() - kStderrTailBytes) : text);
}

constexpr const char* kTrialDirPrefix = "runx-trial-";
constexpr const char* kTrialDirLock = "in-use.lock";  ///< held by the runx that made the folder

}  // namespace

int RemoveStaleTrialDirs() {
  int removed = 0;
  std::error_code ec;
  const std::string prefix = kTrialDirPrefix;
  for (fs::directory_iterator it(base::TempDir(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0 || !it->is_directory()) continue;
    const std::string rest = name.substr(prefix.size());
    const auto dash = rest.find('-');
    if (dash == std::string::npos || dash == 0) continue;  // not runx's naming
    int64_t pid = 0;
    try {
      pid = std::stoll(rest.substr(0, dash));
    } catch (const std::exception&) {
      continue;
    }
    // The folder's lock says whether its runx runs, whatever its PID namespace; a folder without
    // one (being made, or made by an older runx) is judged by its runx's pid, and not before a minute.
    const auto lock = base::HeldLock::Probe((it->path() / kTrialDirLock).string());
    if (lock == base::HeldLock::State::kHeld) continue;
    if (lock == base::HeldLock::State::kMissing) {
      if (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;  // its runx still runs
      struct stat st {};
      if (::stat(it->path().c_str(), &st) != 0 || std::time(nullptr) - st.st_mtime < 60) continue;
    }
    base::RemoveTree(it->path());
    ++removed;
  }
  return removed;
}

std::vector<std::string> RankLauncherFromEnvironment() {
  std::vector<std::string> words;
  const char* text = std::getenv("RUNX_RANK_LAUNCHER");
  std::stringstream ss(text ? text : "");
  for (std::string w; ss >> w;) words.push_back(w);
  // srun: one rank that fails ends the others at once (they would wait for it in a collective).
  if (!words.empty() && fs::path(words.front()).filename() == "srun" &&
      std::none_of(words.begin(), words.end(),
                   [](const std::string& w) { return w.rfind("--kill-on-bad-exit", 0) == 0; }))
    words.insert(words.begin() + 1, "--kill-on-bad-exit=1");
  return words;
}

std::string WorkerPath() {
  if (const char* own = std::getenv("RUNX_WORKER"); own && *own) return own;
  const std::string dir = base::ExecutableDir();
  return (dir.empty() ? std::string(".") : dir) + "/runx-worker";
}

namespace {

/// One process of a trial: the trial itself, or one rank of a data-parallel trial.
struct TrialProcess {
  pid_t pid = 0;
  int status = 0;
  bool reaped = false;
  std::string stderr_path;
};

/// Starts `args` (running `exe`) with stdout on `stdout_fd` (or /dev/null when < 0), stderr into
/// `stderr_path`, in process group `pgid` (0: a new group it leads), with default signals and
/// `options.env` set over the parent's environment.
pid_t SpawnTrialProcess(const ChildOptions& options, const std::string& exe, const std::vector<std::string>& args,
                        int stdout_fd, const std::string& stderr_path, pid_t pgid) {
  // posix_spawn, not fork (base/process.h says why: the parent may hold a CUDA context). The
  // child gets a pipe as stdout, a file as stderr, nothing else, its own process group and
  // default signals.
  base::SpawnOptions spawn;
  spawn.program = exe;
  spawn.out = stdout_fd >= 0 ? base::SpawnStream::Fd(stdout_fd) : base::SpawnStream::Null();
  spawn.err = base::SpawnStream::File(stderr_path);
  spawn.process_group = pgid;
  spawn.default_signals = true;
  spawn.close_other_fds = true;
  spawn.env = options.env;
  return base::Spawn(args, spawn);
}

/// Reaps whichever of `procs` have ended; returns the index of the first one that ended badly
/// (a signal, or an exit status other than 0), -1 when none did.
int ReapEnded(std::vector<TrialProcess>& procs) {
  int bad = -1;
  for (size_t r = 0; r < procs.size(); ++r) {
    auto& p = procs[r];
    if (p.reaped || waitpid(p.pid, &p.status, WNOHANG) != p.pid) continue;
    p.reaped = true;
    if (bad < 0 && (WIFSIGNALED(p.status) || (WIFEXITED(p.status) && WEXITSTATUS(p.status) != 0)))
      bad = static_cast<int>(r);
  }
  return bad;
}

bool AllReaped(const std::vector<TrialProcess>& procs) {
  for (const auto& p : procs)
    if (!p.reaped) return false;
  return true;
}

/// Ends every process of the trial: `sig` to its process group (all ranks and whatever they
/// started), SIGKILL after a second for any left, and reaps them.
void EndTrialProcesses(std::vector<TrialProcess>& procs, pid_t pgid, int sig) {
  if (AllReaped(procs)) return;  // the group is empty: its id may already be another's
  kill(-pgid, sig);
  for (int i = 0; i < 50 && (ReapEnded(procs), !AllReaped(procs)); ++i) usleep(20000);
  if (AllReaped(procs)) return;
  kill(-pgid, SIGKILL);
  for (auto& p : procs)
    if (!p.reaped) waitpid(p.pid, &p.status, 0), p.reaped = true;
}

/// How a process of the trial ended, for a trial that left no record (or whose rank died).
void DescribeEnd(int status, const std::string& who, const std::string& progress, const std::string& stderr_text,
                 store::TrialRecord& r) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (IsOutOfMemoryKill(sig)) {
      r.status = TrialStatus::kOom;
      r.error = fmt::format("{}killed by SIGKILL{} (most likely the kernel's out-of-memory killer)", who, progress);
    } else {
      r.status = TrialStatus::kCrashed;
      r.error = fmt::format("{}crashed: {} (signal {}){}", who, strsignal(sig), sig, progress);
    }
  } else {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.status = IsOutOfMemory(stderr_text) ? TrialStatus::kOom : TrialStatus::kCrashed;
    r.error = fmt::format("{}exited with status {}{}", who, code, progress);
  }
  const std::string last = base::LastLine(stderr_text, "frame #");  // without LibTorch's backtrace
  if (!last.empty()) r.error += ": " + last;
}

}  // namespace

ChildOutcome RunTrialInChild(const nlohmann::json& config, const ChildOptions& options, store::TrialRecord* record) {
  // A data-parallel trial is `ranks` processes in one process group, rank 0 its leader; rank 0
  // reports progress and writes the record, the others only train. Read as the child reads it (a
  // key of the wrong type is named here, before anything starts).
  const int ranks = spec::TrialConfig::From(config).ranks();
  // The parent's pid in the name lets a later runx remove the folders of a parent that was killed.
  std::string why;
  const auto made = base::MakeTempDir(fmt::format("{}{}-", kTrialDirPrefix, getpid()), &why);
  if (!made) throw std::runtime_error(why);
  const fs::path dir(*made);
  // Held while the folder is in use: another runx, in any PID namespace, leaves the folder alone.
  std::optional<base::HeldLock> in_use;
  try {
    in_use.emplace((dir / kTrialDirLock).string());
  } catch (const std::runtime_error& e) {
    base::RemoveTree(dir.string());
    throw std::runtime_error(fmt::format("cannot lock the trial's folder in TMPDIR ({})", e.what()));
  }
  const std::string cfg = (dir / "config.json").string(), out = (dir / "record.json").string(),
                    prog = (dir / "progress.bin").string(), rendezvous = (dir / "rendezvous").string();
  {
    // A full or read-only TMPDIR fails the trial with its cause, not a child that dies unexplained.
    const int64_t zeros[2] = {0, 0};
    std::string error =
        base::WriteFileAtomically(prog, std::string_view(reinterpret_cast<const char*>(zeros), sizeof zeros));
    if (error.empty())
      error = base::WriteFileAtomically(cfg, config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (!error.empty()) {
      base::RemoveTree(dir.string());
      throw std::runtime_error(fmt::format("cannot write the trial's files in TMPDIR ({})", error));
    }
  }

  const bool launched = ranks > 0 && !options.rank_launcher.empty();  // the launcher starts the ranks
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const std::string started = UtcNow();
  const std::string parent = std::to_string(getpid());
  std::vector<TrialProcess> procs(static_cast<size_t>(launched ? 1 : std::max(ranks, 1)));
  pid_t pgid = 0;
  try {
    if (launched) {
      procs[0].stderr_path = (dir / "stderr.txt").string();
      std::vector<std::string> args = options.rank_launcher;
      args.insert(args.end(), {fmt::format("--ntasks={}", ranks), options.runx_exe, "trial", "--config", cfg, "--out",
                               out, "--progress", prog, "--rendezvous", rendezvous, "--ranks-from-env"});
      procs[0].pid = SpawnTrialProcess(options, args.front(), args, fds[1], procs[0].stderr_path, 0);
      pgid = procs[0].pid;
    }
    for (size_t r = 0; !launched && r < procs.size(); ++r) {
      procs[r].stderr_path =
          (dir / (r == 0 ? std::string("stderr.txt") : fmt::format("stderr.rank{}.txt", r))).string();
      std::vector<std::string> args{"runx", "trial", "--config", cfg, "--out", out, "--parent", parent};
      if (r == 0) args.insert(args.end(), {"--progress", prog});
      if (ranks > 0)
        args.insert(args.end(),
                    {"--rank", std::to_string(r), "--world-size", std::to_string(ranks), "--rendezvous", rendezvous});
      procs[r].pid =
          SpawnTrialProcess(options, options.runx_exe, args, r == 0 ? fds[1] : -1, procs[r].stderr_path, pgid);
      if (r == 0) pgid = procs[0].pid;
    }
  } catch (...) {
    close(fds[0]);
    close(fds[1]);
    if (pgid > 0) EndTrialProcesses(procs, pgid, SIGKILL);
    throw;
  }
  close(fds[1]);
  const auto deadline = Clock::now() + std::chrono::duration<double>(options.timeout_s);
  bool timed_out = false, interrupted = false;
  int failed_rank = -1;  // a rank that ended badly: the trial is over
  int64_t last_step = 0, total_steps = 0, peak_mem = -1;
  std::string buffer;
  char chunk[4096];
  for (bool open_pipe = true; open_pipe || !AllReaped(procs);) {
    if (open_pipe) {
      pollfd p{fds[0], POLLIN, 0};
      const int ready = poll(&p, 1, 100);
      if (ready > 0) {
        const ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n <= 0) {
          open_pipe = false;
        } else {
          buffer.append(chunk, static_cast<size_t>(n));
          for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1)) {
            auto ev = nlohmann::json::parse(buffer.substr(0, nl), nullptr, false);
            if (ev.is_discarded() || !ev.is_object()) continue;  // other output of the child's libraries
            if (ev.value("event", "") == "progress") {
              last_step = ev.value("step", last_step);
              total_steps = ev.value("total", total_steps);
              peak_mem = ev.value("peak_mem_bytes", peak_mem);
            }
            if (options.on_event) options.on_event(ev);
          }
        }
      }
    } else {
      usleep(20000);
    }
    if (ranks > 0) {  // a rank that died ends the trial: the others would wait for it
      const int bad = ReapEnded(procs);
      if (bad >= 0) {
        failed_rank = bad;
        break;
      }
    } else if (!open_pipe) {
      waitpid(procs[0].pid, &procs[0].status, 0);
      procs[0].reaped = true;
    }
    if (options.interrupted && options.interrupted->load()) {
      interrupted = true;
      break;
    }
    if (Clock::now() > deadline) {
      timed_out = true;
      break;
    }
  }
  // A launcher is asked to end its ranks (srun cancels its job step on SIGTERM), then killed.
  EndTrialProcesses(procs, pgid, interrupted || launched ? SIGTERM : SIGKILL);
  close(fds[0]);

  if (interrupted) {
    base::RemoveTree(dir);
    return ChildOutcome::kInterrupted;
  }
  const std::string stderr_text = base::ReadFile(procs[0].stderr_path).value_or("");
  {
    int64_t counts[2] = {0, 0};
    std::ifstream(prog, std::ios::binary).read(reinterpret_cast<char*>(counts), sizeof counts);
    if (counts[1] > 0) last_step = counts[0], total_steps = counts[1];
  }
  const std::string tail = StderrTail(stderr_text);
  const std::string progress =
      total_steps > 0 ? fmt::format(" after {} of {} steps", last_step, total_steps) : " before its first step";
  // A rank other than 0 whose trial failed (an exception, out of memory, NaN) wrote its record
  // and exited with status 3 (TrialChildMain): its record says what happened, naming the rank.
  const std::string rank_out = fmt::format("{}.rank{}", out, failed_rank);
  const bool rank_record = !timed_out && failed_rank > 0 && fs::exists(rank_out);
  if (!timed_out && (failed_rank < 0 || rank_record) && fs::exists(rank_record ? rank_out : out)) {
    *record = RecordFromJson(nlohmann::json::parse(base::ReadFile(rank_record ? rank_out : out).value_or("")));
    std::string detail_tail = tail;
    if (rank_record) {
      const std::string who = fmt::format("rank {} of {}: ", failed_rank, ranks);
      record->error = who + record->error;
      if (!record->error_detail.empty()) record->error_detail = who + record->error_detail;
      detail_tail = StderrTail(base::ReadFile(procs[failed_rank].stderr_path).value_or(""));
    }
    if (record->status != TrialStatus::kOk && !detail_tail.empty()) {
      record->error_detail = (record->error_detail.empty() ? record->error : record->error_detail) + "\n" + detail_tail;
    }
  } else {
    store::TrialRecord r;
    r.started_at = started;
    std::string detail_tail = tail;
    if (timed_out) {
      r.status = TrialStatus::kTimeout;
      r.error = fmt::format("timed out after {:g} s{} (trial_timeout_s)", options.timeout_s, progress);
    } else if (failed_rank > 0) {
      const std::string rank_err = base::ReadFile(procs[failed_rank].stderr_path).value_or("");
      DescribeEnd(procs[failed_rank].status, fmt::format("rank {} of {} ", failed_rank, ranks),
                  fmt::format(" (rank 0 was{})", progress), rank_err, r);
      const std::string rank_tail = StderrTail(rank_err);
      detail_tail = rank_tail.empty() ? tail : fmt::format("rank {}: {}", failed_rank, rank_tail);
    } else {
      const std::string who = launched    ? fmt::format("{} ({} ranks) ", options.rank_launcher.front(), ranks)
                              : ranks > 0 ? fmt::format("rank 0 of {} ", ranks)
                                          : "";
      DescribeEnd(procs[0].status, who, progress, stderr_text, r);
    }
    r.error_detail = detail_tail.empty() ? r.error : r.error + "\n" + detail_tail;
    r.metrics.push_back({"steps_done", static_cast<double>(last_step), "", {}});
    if (peak_mem >= 0) r.metrics.push_back({"peak_mem_bytes", static_cast<double>(peak_mem), "bytes", {}});
    *record = std::move(r);
  }
  record->finished_at = UtcNow();
  base::RemoveTree(dir);
  return ChildOutcome::kRecorded;
}

}  // namespace runx::engine
