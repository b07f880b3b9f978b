#pragma once
// Device selection, synchronization and memory figures for CPU, CUDA and MPS.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "machine/energy.h"

namespace runx::engine {

/// A device the user asked for cannot be used; the message names what is available.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Devices usable in this process, e.g. {"cpu", "cuda:0", "cuda:1"} or {"cpu", "mps"}.
std::vector<std::string> AvailableDevices();

/// Resolves a DSL device ("auto" | "cpu" | "mps" | "cuda" | "cuda:N"). auto prefers mps, then
/// cuda:0, then cpu. Throws DeviceError for a device that is not available here.
c10::Device SelectDevice(const std::string& spec);

/// Waits for all work queued on `device` (no-op on the CPU).
void Synchronize(const c10::Device& device);

/// Human-readable name: CPU model, GPU name ("NVIDIA H200"), "Apple MPS".
std::string DeviceName(const c10::Device& device);

/// Peak memory since the last ResetPeakMemory: device allocator peak on CUDA, current allocated
/// on MPS (LibTorch has no MPS peak), peak resident set size of the process on the CPU.
int64_t PeakMemoryBytes(const c10::Device& device);
void ResetPeakMemory(const c10::Device& device);
/// Returns the device allocator's cached, unused blocks to the driver (CUDA, MPS; no-op on CPU).
void ReleaseCache(const c10::Device& device);
/// Reserved (cached) bytes of the device allocator; -1 where there is none.
int64_t ReservedMemoryBytes(const c10::Device& device);

/// The meter of the energy `device` uses (machine/energy.h): NVML for a CUDA GPU, RAPL for the
/// CPU; for MPS none (macOS reads energy only through powermetrics, as root). RUNX_ENERGY=off:
/// none, "switched off" (what the meter costs is measured so: bench/energy-overhead.sh).
EnergyMeterOrWhy OpenEnergyMeter(const c10::Device& device);

/// Timing for asynchronous devices. On CUDA: events recorded on the current stream, read after
/// one synchronization at the end; elsewhere a steady clock after synchronizing at boundaries.
class StepTimer {
 public:
  explicit StepTimer(const c10::Device& device);
  ~StepTimer();
  StepTimer(const StepTimer&) = delete;
  StepTimer& operator=(const StepTimer&) = delete;
  /// Marks a boundary; step i spans marks i and i+1. Never synchronizes on CUDA.
  void Mark();
  /// Milliseconds between consecutive marks (synchronizes once).
  std::vector<double> ElapsedMs();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace runx::engine
