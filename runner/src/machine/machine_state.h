#pragma once
// What decides measurement noise on this machine, recorded with every run (environment keys
// noise.*), so that `runx compare` can say when two runs ran under different conditions.
// Read from /proc and /sys where they exist; a key that cannot be read is left out. No LibTorch.
#include <map>
#include <string>

namespace runx::engine {

/// CPU-side noise facts, read under `root` ("" for the real /; tests pass a fake tree):
///   noise.cpu_governor   the cpufreq scaling governors of the CPUs, distinct, e.g. "performance"
///                        or "powersave (cpu0-3), performance (cpu4-7)" (absent without cpufreq)
///   noise.cpu_boost      "on"/"off": turbo/boost (cpufreq/boost, or intel_pstate/no_turbo)
///   noise.load_average   the 1, 5 and 15-minute load averages when the run started, e.g. "0.52 0.48 0.40"
/// The CPU model is the environment's `cpu` key.
std::map<std::string, std::string> CpuNoiseState(const std::string& root = "");

/// GPU-side noise facts from NVML (machine/nvml.h), N being NVML's GPU index:
///   noise.gpu_driver                   driver version and the CUDA version it supports, e.g. "580.95.05 (CUDA 13.0)"
///   noise.gpu<N>_max_clocks_mhz        "sm 1980, mem 3201": the device's clock limits
///   noise.gpu<N>_application_clocks_mhz  the application clocks set on the device, same form
///   noise.gpu<N>_power_limit_w         the enforced power limit, e.g. "700"
///   noise.gpu<N>_persistence           "on"/"off"
///   noise.gpu<N>_compute_mode          "default", "exclusive_process", ...
/// and, read when the run starts (they move from run to run; `runx compare` does not list their
/// differences):
///   noise.gpu<N>_sm_clock_mhz_at_start, noise.gpu<N>_temperature_c_at_start,
///   noise.gpu<N>_utilization_at_start ("0%"), noise.gpu<N>_throttle_at_start ("gpu_idle",
///   "sw_power_cap, hw_slowdown", "none"), noise.gpu<N>_processes_at_start (compute processes
///   already on the GPU: another job sharing it)
/// Empty without NVML (no NVIDIA driver). A fact NVML does not give for a device is left out.
std::map<std::string, std::string> GpuNoiseState();
/// The keys above for one NVML reading (GpuNoiseState reads the real one).
struct NvmlSnapshot;
std::map<std::string, std::string> DescribeGpuNoise(const NvmlSnapshot& snapshot);

/// Both.
std::map<std::string, std::string> NoiseState();

/// The moving part of the machine's state as a trial's measured steps end, for the trial's own
/// environment (the run's keys are read once, when the run starts; a trial late in a long sweep
/// may have met another machine):
///   noise.load_average_after         the 1, 5 and 15-minute load averages, "0.52 0.48 0.40"
///   noise.cpu_mhz_after              the mean current frequency of the CPUs (cpufreq), MHz, e.g. "2893"
///   noise.gpu<N>_sm_clock_mhz_after, noise.gpu<N>_temperature_c_after, noise.gpu<N>_utilization_after,
///   noise.gpu<N>_throttle_after, noise.gpu<N>_processes_after  (NVML, every GPU, as the *_at_start keys)
/// Read under `root` ("" for the real /) and through `nvml` (the driver's library); what cannot
/// be read is left out.
std::map<std::string, std::string> NoiseStateAfterMeasuring(const std::string& root = "",
                                                            const std::string& nvml = "libnvidia-ml.so.1");

}  // namespace runx::engine
