#include "trial/device.h"
#include "runx/device_memory.h"
#include "trial/host_memory.h"

#include <sys/resource.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/cuda.h>

#include "runx/compat.h"
#ifdef RUNX_WITH_CUDA
#include "trial/cuda_support.h"
#endif

namespace runx::engine {

namespace {

int CudaCount() { return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0; }

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
#ifdef __APPLE__
  return "Apple CPU";
#else
  return "unknown CPU";
#endif
}

}  // namespace

std::vector<std::string> AvailableDevices() {
  std::vector<std::string> out{"cpu"};
  for (int i = 0; i < CudaCount(); ++i) out.push_back(fmt::format("cuda:{}", i));
  if (compat::MpsAvailable()) out.push_back("mps");
  return out;
}

c10::Device SelectDevice(const std::string& spec) {
  const auto available = AvailableDevices();
  const auto unavailable = [&](const std::string& why) {
    return DeviceError(
        fmt::format("device '{}' is not available: {}; available here: {}", spec, why, fmt::join(available, ", ")));
  };
  if (spec == "auto") {
    if (compat::MpsAvailable()) return c10::Device(c10::DeviceType::MPS);
    if (CudaCount() > 0) return c10::Device(c10::DeviceType::CUDA, 0);
    return c10::Device(c10::DeviceType::CPU);
  }
  if (spec == "cpu") return c10::Device(c10::DeviceType::CPU);
  if (spec == "mps") {
    if (!compat::MpsAvailable())
      throw unavailable(
          "this LibTorch has no usable MPS backend (it needs the macOS arm64 build "
          "of LibTorch on Apple silicon)");
    return c10::Device(c10::DeviceType::MPS);
  }
  if (spec.rfind("cuda", 0) == 0) {
    int index = 0;
    if (spec.size() > 4) {
      if (spec[4] != ':' || spec.size() == 5) throw DeviceError(fmt::format("bad device '{}'", spec));
      const std::string digits = spec.substr(5);
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (ec != std::errc() || end != digits.data() + digits.size() || index < 0) {
        throw DeviceError(fmt::format("bad device '{}': expected cuda:N with N a GPU index", spec));
      }
    }
    const int count = CudaCount();
    if (count == 0) throw unavailable("this LibTorch was built without CUDA or no CUDA device is visible");
    if (index >= count) throw unavailable(fmt::format("there are {} CUDA device(s)", count));
    return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw DeviceError(fmt::format("unknown device '{}'; expected auto, cpu, mps, cuda or cuda:N", spec));
}

void Synchronize(const c10::Device& device) {
  if (device.is_cuda())
    torch::cuda::synchronize(device.index());
  else if (device.is_mps())
    compat::MpsSynchronize();
}

std::string DeviceName(const c10::Device& device) {
  if (device.is_cpu()) return CpuModel();
  if (device.is_mps()) return "Apple MPS";
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) return cuda::DeviceName(device.has_index() ? device.index() : 0);
#endif
  return device.str();
}

int64_t PeakMemoryBytes(const c10::Device& device) {
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) return cuda::PeakAllocatedBytes(device.index());
#endif
  if (device.is_mps()) return static_cast<int64_t>(compat::MpsAllocatedBytes());
  if (host_memory::Installed()) return host_memory::PeakBytes();
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
#ifdef __APPLE__
  return usage.ru_maxrss;  // bytes on macOS
#else
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // kilobytes on Linux
#endif
}

void ResetPeakMemory(const c10::Device& device) {
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) cuda::ResetPeak(device.index());
#endif
  if (device.is_cpu() && host_memory::Installed()) host_memory::ResetPeak();
}

void ReleaseCache(const c10::Device& device) { device_memory::ReleaseCache(device); }

int64_t ReservedMemoryBytes(const c10::Device& device) { return device_memory::ReservedBytes(device); }

EnergyMeterOrWhy OpenEnergyMeter(const c10::Device& device) {
  if (!ReadEnergySwitch().on) return {nullptr, "switched off (RUNX_ENERGY=off)"};
  if (device.is_cpu()) return OpenCpuEnergyMeter();
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) return OpenGpuEnergyMeter(cuda::PciBusId(device.has_index() ? device.index() : 0));
#endif
  if (device.is_mps())
    return {nullptr, "no energy counter for Apple GPUs (macOS gives it only to powermetrics, as root)"};
  return {nullptr, fmt::format("no energy counter for {}", device.str())};
}

struct StepTimer::Impl {
  c10::Device device;
  std::vector<std::chrono::steady_clock::time_point> marks;
#ifdef RUNX_WITH_CUDA
  std::unique_ptr<cuda::EventTimer> events;
#endif
};

StepTimer::StepTimer(const c10::Device& device) : impl_(new Impl{device, {}}) {
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) impl_->events = std::make_unique<cuda::EventTimer>(device.index());
#endif
}

StepTimer::~StepTimer() { delete impl_; }

void StepTimer::Mark() {
#ifdef RUNX_WITH_CUDA
  if (impl_->events) return impl_->events->Mark();
#endif
  // Without events (MPS; CUDA when built without CUDA support): synchronize at each boundary,
  // so the host clock measures finished work, never queued work.
  if (!impl_->device.is_cpu()) Synchronize(impl_->device);
  impl_->marks.push_back(std::chrono::steady_clock::now());
}

std::vector<double> StepTimer::ElapsedMs() {
#ifdef RUNX_WITH_CUDA
  if (impl_->events) return impl_->events->ElapsedMs();
#endif
  std::vector<double> ms;
  for (size_t i = 1; i < impl_->marks.size(); ++i)
    ms.push_back(std::chrono::duration<double, std::milli>(impl_->marks[i] - impl_->marks[i - 1]).count());
  return ms;
}

}  // namespace runx::engine
