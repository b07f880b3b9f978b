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

/// GPU-side noise facts: driver version, SM/memory clocks, power limit, persistence mode, as
/// noise.gpu<N>_* keys. The place for NVML (or the CUDA runtime) to fill in; empty for now.
std::map<std::string, std::string> GpuNoiseState();

/// Both.
std::map<std::string, std::string> NoiseState();

}  // namespace runx::engine
