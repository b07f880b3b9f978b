#include "base/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace runx::base {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
};

void AddStream(posix_spawn_file_actions_t* actions, const SpawnStream& s, int target) {
  const int write_flags = O_WRONLY | O_CREAT | O_TRUNC;
  switch (s.to) {
    case SpawnStream::To::kInherit:
      break;
    case SpawnStream::To::kNull:
      posix_spawn_file_actions_addopen(actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0);
      break;
    case SpawnStream::To::kFd:
      posix_spawn_file_actions_adddup2(actions, s.fd, target);
      break;
    case SpawnStream::To::kFile:
      posix_spawn_file_actions_addopen(actions, target, s.path.c_str(), target == STDIN_FILENO ? O_RDONLY : write_flags,
                                       0644);
      break;
  }
}

}  // namespace

SpawnError::SpawnError(const std::string& program, int error)
    : std::runtime_error(fmt::format("cannot start '{}': {}", program, std::strerror(error))), error_(error) {}

pid_t Spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  const std::string& program = options.program.empty() && !argv.empty() ? argv[0] : options.program;
  if (argv.empty()) throw SpawnError(program, EINVAL);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  AddStream(&actions, options.in, STDIN_FILENO);
  AddStream(&actions, options.out, STDOUT_FILENO);
  AddStream(&actions, options.err, STDERR_FILENO);
  if (options.close_other_fds) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // none of the parent's descriptors
#endif
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  short flags = 0;
  if (options.process_group) {
    posix_spawnattr_setpgroup(&attr, *options.process_group);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  if (options.default_signals) {
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGHUP);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    flags |= POSIX_SPAWN_SETSIGDEF;
  }
  posix_spawnattr_setflags(&attr, flags);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The parent's environment with options.env set over it.
  std::vector<std::string> env_text;
  std::vector<char*> envp;
  if (!options.env.empty()) {
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string kv(*e);
      if (!options.env.count(kv.substr(0, kv.find('=')))) env_text.push_back(kv);
    }
    for (const auto& [key, value] : options.env) env_text.push_back(key + "=" + value);
    for (std::string& kv : env_text) envp.push_back(kv.data());
    envp.push_back(nullptr);
  }
  pid_t pid = 0;
  // posix_spawnp: a launcher (srun), git or python is found on PATH; runx itself is an absolute path.
  const int rc =
      posix_spawnp(&pid, program.c_str(), &actions, &attr, args.data(), options.env.empty() ? environ : envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw SpawnError(program, rc);
  return pid;
}

int WaitForExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

namespace {

/// write(2) to a pipe whose reader may be gone: EPIPE instead of SIGPIPE, which would end runx.
ssize_t WriteWithoutSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_signal, old;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
  const ssize_t n = write(fd, data, size);
  const int error = errno;
  if (n < 0 && error == EPIPE) {  // the SIGPIPE it raised is pending on this thread: take it
    const timespec now{0, 0};
    sigtimedwait(&pipe_signal, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = error;
  return n;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv, const std::optional<std::string>& input) {
  ProcessResult r;
  if (argv.empty()) {
    r.error = "no command";
    return r;
  }
  Pipe in, out, err;
  if (pipe2(out.fd, O_CLOEXEC) != 0 || pipe2(err.fd, O_CLOEXEC) != 0 || (input && pipe2(in.fd, O_CLOEXEC) != 0)) {
    r.error = std::strerror(errno);
    return r;
  }
  SpawnOptions options;
  options.in = input ? SpawnStream::Fd(in.fd[0]) : SpawnStream::Null();
  options.out = SpawnStream::Fd(out.fd[1]);
  options.err = SpawnStream::Fd(err.fd[1]);
  pid_t pid = 0;
  try {
    pid = Spawn(argv, options);
  } catch (const SpawnError& e) {
    // A name is looked up on PATH; a path (it holds a '/') is the file itself, which says why.
    const bool looked_up = argv[0].find('/') == std::string::npos;
    r.error = e.error() == ENOENT && looked_up ? "not found on PATH" : std::strerror(e.error());
    return r;
  }
  r.started = true;
  for (int* fd : {&out.fd[1], &err.fd[1], &in.fd[0]}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  if (input) fcntl(in.fd[1], F_SETFL, O_NONBLOCK);
  size_t written = 0;
  // All streams at once, so a command that fills one pipe while we wait on another cannot stall.
  pollfd fds[3] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}, {input ? in.fd[1] : -1, POLLOUT, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_streams = 2;
  char buf[4096];
  while (open_streams > 0) {
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_streams;
      }
    }
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n =
          written < input->size() ? WriteWithoutSigpipe(in.fd[1], input->data() + written, input->size() - written) : 0;
      if (n > 0) written += static_cast<size_t>(n);
      if (written >= input->size() || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        close(in.fd[1]);  // all of it, or a reader that is gone: its end of input
        in.fd[1] = fds[2].fd = -1;
      }
    }
  }
  r.status = WaitForExit(pid);
  return r;
}

}  // namespace runx::base
