#include "sweep/runners.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "base/cleanup.h"
#include "base/files.h"

namespace runx::engine {

std::string ProcessToken(int64_t pid) {
#ifdef __linux__
  const std::string boot = base::ReadFirstLine("/proc/sys/kernel/random/boot_id");
  const std::string stat = base::ReadFirstLine(fmt::format("/proc/{}/stat", pid));
  // Field 22 is the start time; the command name (field 2) may hold spaces, so count from ')'.
  const auto close = stat.rfind(')');
  if (boot.empty() || close == std::string::npos) return "";
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
  }
  return field.empty() ? "" : boot + ":" + field;
#else
  (void)pid;
  return "";
#endif
}

bool ProcessAlive(const std::string& host, int64_t pid, const std::string& token) {
  if (host != HostName()) return true;
  if (pid <= 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
#ifdef __linux__
  // A killed process that its parent has not reaped yet still has a pid: it is gone all the same.
  const std::string stat = base::ReadFirstLine(fmt::format("/proc/{}/stat", pid));
  const auto close = stat.rfind(')');
  if (close != std::string::npos && close + 2 < stat.size() && (stat[close + 2] == 'Z' || stat[close + 2] == 'X'))
    return false;
#endif
  const std::string own = token.substr(0, token.find(" lock:"));  // the process's part
  return own.empty() || ProcessToken(pid) == own;
}

struct RunnerLock::Held {
  base::HeldLock lock;
};

std::string RunnersDir(const std::string& db_path) { return db_path + ".runners"; }

RunnerLock::RunnerLock(const std::string& db_path) {
  token_ = ProcessToken(getpid());
  std::random_device random;
  const std::string nonce = fmt::format("{:08x}{:08x}", random(), random());
  const std::string& dir = dir_ = RunnersDir(db_path);
  ::mkdir(dir.c_str(), 0755);
  // Locks of runners that ended without removing theirs (SIGKILL) go first.
  if (DIR* d = ::opendir(dir.c_str())) {
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) names.push_back(e->d_name);
    ::closedir(d);
    for (const auto& name : names)
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".lock") == 0 &&
          base::HeldLock::Probe(dir + "/" + name) == base::HeldLock::State::kFree)
        ::unlink((dir + "/" + name).c_str());
  }
  try {
    held_.reset(new Held{base::HeldLock(dir + "/" + nonce + ".lock")});
    token_ += " lock:" + nonce;
  } catch (const std::runtime_error&) {  // no lock: runners judge this one by its pid
  }
}

RunnerLock::~RunnerLock() {
  held_.reset();
  ::rmdir(dir_.c_str());  // the last runner leaves no folder beside the store
}

bool RunnerAlive(const std::string& db_path, const std::string& host, int64_t pid, const std::string& token) {
  if (host != HostName()) return true;
  if (const auto at = token.find(" lock:"); at != std::string::npos) {
    const std::string lock = RunnersDir(db_path) + "/" + token.substr(at + 6) + ".lock";
    switch (base::HeldLock::Probe(lock)) {
      case base::HeldLock::State::kHeld:
        return true;
      case base::HeldLock::State::kFree:
        return false;
      case base::HeldLock::State::kMissing:
        break;  // removed by its runner as it ended, or a store copied from elsewhere: the pid says
    }
  }
  return ProcessAlive(host, pid, token);
}

std::string HostName() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.nodename) : std::string();
}

}  // namespace runx::engine
