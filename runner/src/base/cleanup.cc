#include "base/cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "base/remove_tree.h"

namespace runx::base {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The registered paths. Changed only with the signals blocked; read by the handler only.
std::vector<std::string>& Registered() {
  static auto* paths = new std::vector<std::string>();  // never destroyed: a late signal still finds it
  return *paths;
}

class BlockSignals {
 public:
  BlockSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kSignals) sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~BlockSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

void OnSignal(int sig) {
  const auto& paths = Registered();
  for (auto it = paths.rbegin(); it != paths.rend(); ++it) {
    if (::unlink(it->c_str()) != 0) ::rmdir(it->c_str());
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

struct sigaction g_previous[3];

}  // namespace

RemoveOnSignal::RemoveOnSignal(std::string path) : path_(std::move(path)) {
  BlockSignals block;
  Registered().push_back(path_);
}

RemoveOnSignal::~RemoveOnSignal() {
  BlockSignals block;
  auto& paths = Registered();
  const auto it = std::find(paths.rbegin(), paths.rend(), path_);
  if (it != paths.rend()) paths.erase(std::next(it).base());
}

RemoveOnSignalHandlers::RemoveOnSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = &OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals) sigaddset(&sa.sa_mask, s);  // one handler at a time
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &g_previous[i]);
}

RemoveOnSignalHandlers::~RemoveOnSignalHandlers() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
}

HeldLock::HeldLock(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0 || ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error(fmt::format("cannot lock '{}': {}", path_, std::strerror(err)));
  }
}

HeldLock::~HeldLock() {
  ::unlink(path_.c_str());
  ::close(fd_);
}

HeldLock::State HeldLock::Probe(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return State::kMissing;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free ? State::kFree : State::kHeld;
}

OwnedFolder::OwnedFolder(std::string path) : path_(std::move(path)) {
  if (::mkdir(path_.c_str(), 0700) != 0)
    throw std::runtime_error(fmt::format("cannot create the folder '{}': {}", path_, std::strerror(errno)));
  try {
    lock_.emplace(path_ + "/lock");
  } catch (const std::runtime_error&) {
    RemoveTree(path_);
    throw;
  }
}

OwnedFolder::~OwnedFolder() { RemoveTree(path_); }  // the lock goes after its folder

bool OwnedFolder::Held(const std::string& folder, double grace_s) {
  switch (HeldLock::Probe(folder + "/lock")) {
    case HeldLock::State::kHeld:
      return true;
    case HeldLock::State::kFree:
      return false;
    case HeldLock::State::kMissing:
      break;
  }
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) return false;
  return std::difftime(std::time(nullptr), st.st_mtime) < grace_s;
}

int RemoveAbandonedFolders(const std::string& parent, const std::string& prefix) {
  DIR* dir = ::opendir(parent.c_str());
  if (!dir) return 0;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  ::closedir(dir);
  int removed = 0;
  for (const std::string& name : names) {
    const std::string folder = parent + "/" + name;
    struct stat st {};
    if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
    if (OwnedFolder::Held(folder)) continue;
    RemoveTree(folder);
    removed += ::access(folder.c_str(), F_OK) != 0;
  }
  return removed;
}

}  // namespace runx::base
