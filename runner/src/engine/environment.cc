#include "engine/environment.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>

#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include "engine/device.h"
#include "runx/compat.h"
#include "version.h"
#ifdef RUNX_WITH_CUDA
#include "engine/cuda_support.h"
#endif

namespace runx::engine {

std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::map<std::string, std::string> HostEnvironment() {
  std::map<std::string, std::string> env;
  env["runx_version"] = Version();
  env["runx_git_sha"] = GitSha();
  env["libtorch_version"] = compat::TorchVersionString();
  env["cuda_available"] = torch::cuda::is_available() ? "yes" : "no";
  env["cuda_device_count"] = std::to_string(torch::cuda::is_available() ? torch::cuda::device_count() : 0);
#ifdef RUNX_WITH_CUDA
  env["cuda_runtime_version"] = cuda::CudaRuntimeVersion();
#else
  env["cuda_runtime_version"] = "none (LibTorch built without CUDA)";
#endif
  const auto& hooks = at::detail::getCUDAHooks();
  if (torch::cuda::is_available() && hooks.hasCuDNN()) {
    const long v = hooks.versionCuDNN();
    // cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN 8 major*1000 + minor*100 + patch.
    const long base = v >= 90000 ? 10000 : 1000;
    env["cudnn_version"] = fmt::format("{}.{}.{}", v / base, (v % base) / 100, v % 100);
  } else {
    env["cudnn_version"] = "none";
  }
  env["mps_available"] = compat::MpsAvailable() ? "yes" : "no";
  env["intra_op_threads"] = std::to_string(at::get_num_threads());
  env["inter_op_threads"] = std::to_string(at::get_num_interop_threads());
  struct utsname u {};
  if (uname(&u) == 0) {
    env["os"] = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
    env["host"] = u.nodename;
  }
  env["cpu"] = DeviceName(c10::Device(c10::DeviceType::CPU));
  env["cpu_count"] = std::to_string(sysconf(_SC_NPROCESSORS_ONLN));
  return env;
}

std::map<std::string, std::string> TrialEnvironment(const c10::Device& device) {
  auto env = HostEnvironment();
  env["device"] = device.str();
  env["device_name"] = DeviceName(device);
  return env;
}

}  // namespace runx::engine
