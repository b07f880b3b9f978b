#include "trial/environment.h"

#ifdef __APPLE__
#include <mach-o/dyld.h>
#else
#include <link.h>
#endif
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>

#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include "runx/compat.h"
#include "trial/device.h"
#include "version.h"
#ifdef RUNX_WITH_CUDA
#include "trial/cuda_support.h"
#endif

namespace runx::engine {

namespace {

/// Whether the loaded image `path` is a BLAS library.
bool IsBlas(const char* path) {
  if (path == nullptr) return false;
  const std::string name = std::filesystem::path(path).filename().string();
  for (const char* blas : {"libblas.", "libopenblas", "libmkl_rt", "libblis", "libflexiblas", "Accelerate", "libBLAS."})
    if (name.rfind(blas, 0) == 0) return true;
  return false;
}

std::string Resolved(const char* path) {
  std::error_code ec;
  const auto real = std::filesystem::canonical(path, ec);
  return ec ? std::string(path) : real.string();
}

}  // namespace

std::string BlasLibrary() {
  std::string found;
#ifdef __APPLE__
  for (uint32_t i = 0; i < _dyld_image_count() && found.empty(); ++i)
    if (IsBlas(_dyld_get_image_name(i))) found = Resolved(_dyld_get_image_name(i));
#else
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (!IsBlas(info->dlpi_name)) return 0;
        *static_cast<std::string*>(out) = Resolved(info->dlpi_name);
        return 1;
      },
      &found);
#endif
  return found.empty() ? "none loaded" : found;
}

bool IsReferenceBlas(const std::string& blas) { return blas.find("/blas/libblas.so") != std::string::npos; }

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
  env["blas"] = BlasLibrary();
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
