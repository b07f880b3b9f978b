#include "engine/child.h"

#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <spawn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "engine/environment.h"
#include "engine/failure.h"
#include "engine/record_json.h"
#include "engine/trial.h"
#include "plugins/loader.h"

extern char** environ;

namespace runx::engine {
namespace fs = std::filesystem;

namespace {

/// Removes a directory tree. Not std::filesystem::remove_all: PyTorch's pip wheels (2.x) export
/// their own copy of libstdc++'s filesystem symbols from libtorch.so, and on the H200 machine the
/// dynamic linker bound remove_all to that copy, which calls through a null PLT entry: the parent
/// died (pc 0) at the end of every trial. nftw() is libc's and cannot be interposed that way.
void RemoveTree(const fs::path& dir) {
  nftw(
      dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

using Clock = std::chrono::steady_clock;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The last non-empty line of a child's stderr, without LibTorch's backtrace noise.
std::string LastLine(const std::string& text) {
  std::string last, line;
  std::stringstream ss(text);
  while (std::getline(ss, line))
    if (!line.empty() && line.find("frame #") == std::string::npos) last = line;
  return last;
}

/// The end of a child's stderr, at most kStderrTailBytes, under a heading; "" when it is empty.
constexpr size_t kStderrTailBytes = 16 * 1024;
std::string StderrTail(const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return "";
  const bool cut = text.size() > kStderrTailBytes;
  return fmt::format("--- the trial's stderr{} ---\n{}", cut ? fmt::format(" (last {} bytes)", kStderrTailBytes) : "",
                     cut ? text.substr(text.size() - kStderrTailBytes) : text);
}

constexpr const char* kTrialDirPrefix = "runx-trial-";

std::string TempRoot() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

void Kill(pid_t pid, int sig) {
  kill(-pid, sig);  // the child leads its own process group
  kill(pid, sig);
}

}  // namespace

int RemoveStaleTrialDirs() {
  int removed = 0;
  std::error_code ec;
  const std::string prefix = kTrialDirPrefix;
  for (fs::directory_iterator it(TempRoot(), ec), end; !ec && it != end; it.increment(ec)) {
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
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;  // its runx still runs
    RemoveTree(it->path());
    ++removed;
  }
  return removed;
}

std::string SelfExe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("runx") : p.string();
}

ChildOutcome RunTrialInChild(const nlohmann::json& config, const ChildOptions& options, store::TrialRecord* record) {
  // The parent's pid in the name lets a later runx remove the folders of a parent that was killed.
  std::string tmpl = fmt::format("{}/{}{}-XXXXXX", TempRoot(), kTrialDirPrefix, getpid());
  const char* dir_c = mkdtemp(tmpl.data());
  if (!dir_c) throw std::runtime_error(fmt::format("cannot create a temporary directory: {}", std::strerror(errno)));
  const fs::path dir(dir_c);
  const std::string cfg = (dir / "config.json").string(), out = (dir / "record.json").string(),
                    err = (dir / "stderr.txt").string(), prog = (dir / "progress.bin").string();
  {
    const int64_t zeros[2] = {0, 0};
    std::ofstream(prog, std::ios::binary).write(reinterpret_cast<const char*>(zeros), sizeof zeros);
  }
  std::ofstream(cfg) << config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const std::string started = UtcNow();
  // posix_spawn (vfork semantics), not fork: the parent may hold a CUDA context, and a fork's
  // copy-on-write duplicate of its pinned and device-mapped memory breaks that context (seen on
  // the H200: the parent died at the trial's end). The child gets a pipe as stdout, a file as
  // stderr, nothing else, its own process group and default signals.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // none of the parent's descriptors
#endif
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGHUP);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  const std::string parent = std::to_string(getpid());
  const char* argv[] = {"runx", "trial", "--config", cfg.c_str(), "--out", out.c_str(), "--progress", prog.c_str(),
                        "--parent", parent.c_str(), nullptr};
  // The parent's environment with options.env set over it.
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    if (!options.env.count(kv.substr(0, kv.find('=')))) env_text.push_back(kv);
  }
  for (const auto& [key, value] : options.env) env_text.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (std::string& kv : env_text) envp.push_back(kv.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, options.runx_exe.c_str(), &actions, &attr, const_cast<char* const*>(argv), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(fmt::format("cannot start '{}': {}", options.runx_exe, std::strerror(rc)));
  }
  close(fds[1]);
  const auto deadline = Clock::now() + std::chrono::duration<double>(options.timeout_s);
  bool timed_out = false, interrupted = false;
  int64_t last_step = 0, total_steps = 0, peak_mem = -1;
  std::string buffer;
  char chunk[4096];
  for (bool open_pipe = true; open_pipe;) {
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
    if (options.interrupted && options.interrupted->load()) {
      interrupted = true;
      break;
    }
    if (Clock::now() > deadline) {
      timed_out = true;
      break;
    }
  }
  int status = 0;
  if (interrupted || timed_out) {
    Kill(pid, interrupted ? SIGTERM : SIGKILL);
    bool reaped = false;
    for (int i = 0; i < 50 && !(reaped = waitpid(pid, &status, WNOHANG) == pid); ++i) usleep(20000);
    if (!reaped) {
      Kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  } else {
    waitpid(pid, &status, 0);
  }
  close(fds[0]);

  if (interrupted) {
    RemoveTree(dir);
    return ChildOutcome::kInterrupted;
  }
  const std::string stderr_text = ReadFile(err);
  {
    int64_t counts[2] = {0, 0};
    std::ifstream(prog, std::ios::binary).read(reinterpret_cast<char*>(counts), sizeof counts);
    if (counts[1] > 0) last_step = counts[0], total_steps = counts[1];
  }
  const std::string tail = StderrTail(stderr_text);
  if (!timed_out && fs::exists(out)) {
    *record = RecordFromJson(nlohmann::json::parse(ReadFile(out)));
    if (record->status != TrialStatus::kOk && !tail.empty()) {
      record->error_detail = (record->error_detail.empty() ? record->error : record->error_detail) + "\n" + tail;
    }
  } else {
    store::TrialRecord r;
    r.config_json = config.dump();
    r.started_at = started;
    const std::string progress =
        total_steps > 0 ? fmt::format(" after {} of {} steps", last_step, total_steps) : " before its first step";
    if (timed_out) {
      r.status = TrialStatus::kTimeout;
      r.error = fmt::format("timed out after {:g} s{} (trial_timeout_s)", options.timeout_s, progress);
    } else if (WIFSIGNALED(status)) {
      const int sig = WTERMSIG(status);
      if (IsOutOfMemoryKill(sig)) {
        r.status = TrialStatus::kOom;
        r.error = fmt::format("killed by SIGKILL{} (most likely the kernel's out-of-memory killer)", progress);
      } else {
        r.status = TrialStatus::kCrashed;
        r.error = fmt::format("crashed: {} (signal {}){}", strsignal(sig), sig, progress);
      }
    } else {
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      r.status = IsOutOfMemory(stderr_text) ? TrialStatus::kOom : TrialStatus::kCrashed;
      r.error = fmt::format("exited with status {}{}", code, progress);
    }
    const std::string last = LastLine(stderr_text);
    if (!last.empty() && !timed_out) r.error += ": " + last;
    r.error_detail = tail.empty() ? r.error : r.error + "\n" + tail;
    r.metrics.push_back({"steps_done", static_cast<double>(last_step), "", {}});
    if (peak_mem >= 0) r.metrics.push_back({"peak_mem_bytes", static_cast<double>(peak_mem), "bytes", {}});
    *record = std::move(r);
  }
  record->finished_at = UtcNow();
  RemoveTree(dir);
  return ChildOutcome::kRecorded;
}

int TrialChildMain(const std::string& config_path, const std::string& out_path, const std::string& progress_path,
                   int64_t parent_pid) {
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a runx that was killed...
#endif
  if (parent_pid > 0 && getppid() != parent_pid) return 1;  // ...even one killed before this line
  const auto config = nlohmann::json::parse(ReadFile(config_path));
  const auto registry = plugins::Registry::Discover(plugins::PluginDirs());
  TrialOptions options;
  volatile int64_t* shared = nullptr;
  if (!progress_path.empty()) {
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
  options.on_progress = [&last](const Progress& p) {
    const auto now = Clock::now();
    if (p.step != p.total && now - last < std::chrono::milliseconds(250)) return;
    last = now;
    nlohmann::json ev{{"event", "progress"}, {"step", p.step}, {"total", p.total}, {"warmup", p.warmup},
                      {"peak_mem_bytes", p.peak_mem_bytes}};
    if (!std::isnan(p.loss)) ev["loss"] = p.loss;
    std::fputs((ev.dump() + "\n").c_str(), stdout);
    std::fflush(stdout);
  };
  const auto record = RunTrial(config, registry, options);
  const std::string tmp = out_path + ".tmp";
  // Error texts may hold bytes that are not UTF-8 (a file name, a library message): replaced, not fatal.
  std::ofstream(tmp) << ToJson(record).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  fs::rename(tmp, out_path);
  return 0;
}

}  // namespace runx::engine
