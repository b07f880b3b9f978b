#include "engine/identity.h"

#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "engine/child.h"
#include "engine/device.h"
#include "engine/environment.h"
#include "spec/identity.h"
#include "spec/spec.h"

namespace runx::engine {
namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::string BuildIdentity(const plugins::Registry& registry) {
  static const std::string kIdentity = [&] {
    std::string parts;
    const auto add = [&](const std::string& name, const std::string& path) {
      std::string sha;
      try {
        sha = spec::Sha256OfFile(path);
      } catch (const std::exception& e) {
        sha = e.what();
      }
      parts += name + " " + sha + "\n";
    };
    add("runx", SelfExe());
    for (const auto& [name, plugin] : registry.plugins()) add(name, plugin.path);
    return spec::Sha256Hex(parts);
  }();
  return kIdentity;
}

std::string BuildType() {
#ifdef RUNX_BUILD_TYPE
  return RUNX_BUILD_TYPE;
#else
  return "";
#endif
}

std::string PlatformIdentity(const c10::Device& device) { return PlatformIdentity(device, TrialEnvironment(device)); }

std::string PlatformIdentity(const c10::Device& device, const std::map<std::string, std::string>& env) {
  const auto get = [&](const char* key) {
    const auto it = env.find(key);
    return it == env.end() ? std::string() : it->second;
  };
  // On the CPU the BLAS library is part of the platform: the reference BLAS runs fp32 matrix
  // products an order of magnitude slower than OpenBLAS (docs/benchmarks.md, "CPU: the quickstart").
  return spec::Sha256Hex(fmt::format("libtorch {}|cuda {}|cudnn {}|{} {}{}", get("libtorch_version"),
                                     get("cuda_runtime_version"), get("cudnn_version"),
                                     c10::DeviceTypeName(device.type(), true), get("device_name"),
                                     device.is_cpu() ? "|blas " + get("blas") : ""));
}

std::string SideBySidePlatform(const std::string& platform, int side_by_side) {
  if (side_by_side <= 1) return platform;
  return spec::Sha256Hex(fmt::format("{}|side by side: {} cpu trials", platform, side_by_side));
}

std::string EnvironmentIdentity(const std::string& build, const std::string& platform) {
  return spec::Sha256Hex(fmt::format("build {}|platform {}", build, platform));
}

std::string ProcessToken(int64_t pid) {
#ifdef __linux__
  const std::string boot = ReadFirstLine("/proc/sys/kernel/random/boot_id");
  const std::string stat = ReadFirstLine(fmt::format("/proc/{}/stat", pid));
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
  const std::string stat = ReadFirstLine(fmt::format("/proc/{}/stat", pid));
  const auto close = stat.rfind(')');
  if (close != std::string::npos && close + 2 < stat.size() && (stat[close + 2] == 'Z' || stat[close + 2] == 'X'))
    return false;
#endif
  return token.empty() || ProcessToken(pid) == token;
}

std::string HostName() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.nodename) : std::string();
}

}  // namespace runx::engine
