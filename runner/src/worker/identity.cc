#include "worker/identity.h"

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
#include "base/install_dirs.h"
#include "spec/identity.h"
#include "spec/spec.h"
#include "trial/device.h"
#include "trial/environment.h"
#include "worker/child.h"

namespace runx::engine {

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
    // runx (which drives the sweep) is the one beside this worker; the worker runs the trials.
    const std::string self = SelfExe();
    const std::string beside = base::ExecutableDir() + "/runx";
    if (beside != self && ::access(beside.c_str(), X_OK) == 0) add("runx", beside);
    add(beside == self ? "runx" : "runx-worker", self);
    for (const auto& [name, plugin] : registry.plugins()) add(name, plugin.path);
    return spec::Sha256Hex(parts);
  }();
  return kIdentity;
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

}  // namespace runx::engine
