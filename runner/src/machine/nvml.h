#pragma once
// GPU facts that decide measurement noise, read through NVML (libnvidia-ml.so.1, shipped with the
// NVIDIA driver) loaded at run time with Boost.DLL: runx needs no NVML headers or link-time
// dependency, and machines without the driver simply have no GPU noise keys. NVML opens no CUDA
// context, so the parent process can read it and stay free of CUDA. No LibTorch.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace runx::engine {

/// One GPU as NVML sees it (NVML's own index order, which ignores CUDA_VISIBLE_DEVICES). A field
/// NVML could not give (unsupported on the device, or a missing symbol) stays empty.
struct NvmlGpu {
  unsigned index = 0;
  std::string name;
  std::optional<unsigned> max_sm_clock_mhz, max_mem_clock_mhz;  // the device's limits
  std::optional<unsigned> app_sm_clock_mhz, app_mem_clock_mhz;  // application clocks (the set target)
  std::optional<double> power_limit_w;                          // enforced power limit
  std::optional<bool> persistence;                              // persistence mode
  std::optional<std::string> compute_mode;                      // default, exclusive_process, prohibited
  // At the moment of reading (the start of the run); these move from run to run.
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> temperature_c;
  std::optional<unsigned> utilization_pct;
  std::optional<uint64_t> throttle_reasons;   // nvmlClocksThrottleReasons bit mask
  std::optional<unsigned> compute_processes;  // processes with a context on the GPU
};

struct NvmlSnapshot {
  std::string driver_version;              // e.g. "580.95.05"
  std::optional<int> cuda_driver_version;  // e.g. 13000 for CUDA 13.0
  std::vector<NvmlGpu> gpus;
};

/// Loads `library` (default: the driver's libnvidia-ml.so.1), initialises NVML, reads every GPU
/// and shuts NVML down. std::nullopt when the library is absent or NVML does not initialise
/// (no driver, no GPU): the normal case on CPU-only machines.
std::optional<NvmlSnapshot> ReadNvml(const std::string& library = "libnvidia-ml.so.1");

/// NVML loaded and initialised for readings over time (the trial's energy meter, machine/energy.h);
/// shut down and unloaded when destroyed. Devices are NVML's opaque handles.
class NvmlSession {
 public:
  using Device = struct NvmlDeviceOpaque*;
  /// std::nullopt's counterpart: nullptr when `library` is absent or NVML does not initialise.
  static std::unique_ptr<NvmlSession> Open(const std::string& library = "libnvidia-ml.so.1");
  ~NvmlSession();
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

  /// The GPU at PCI bus id `bus_id` ("00000000:1B:00.0", as CUDA's device properties give it);
  /// nullptr when NVML knows no such GPU.
  Device ByPciBusId(const std::string& bus_id) const;
  std::string Name(Device d) const;
  /// The GPU's energy since the driver loaded, in millijoules (nvmlDeviceGetTotalEnergyConsumption,
  /// Volta and newer); nullopt where unsupported.
  std::optional<unsigned long long> TotalEnergyMj(Device d) const;
  /// The GPU's power draw in milliwatts (nvmlDeviceGetPowerUsage); nullopt where unsupported.
  std::optional<unsigned> PowerMw(Device d) const;

 private:
  friend std::optional<NvmlSnapshot> ReadNvml(const std::string& library);
  struct Impl;
  explicit NvmlSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The names of the set bits of NVML's throttle-reason mask, e.g. "sw_power_cap, hw_slowdown";
/// "none" for 0.
std::string DescribeThrottleReasons(uint64_t mask);

}  // namespace runx::engine
