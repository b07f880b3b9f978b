#pragma once
// CUDA-only helpers, compiled in cuda_support.cc when LibTorch has CUDA (RUNX_WITH_CUDA).
#include <cstdint>
#include <string>
#include <vector>

namespace runx::engine::cuda {

std::string DeviceName(int index);
std::string DeviceSummary(int index);  ///< name, memory, compute capability
int64_t PeakAllocatedBytes(int index);
void ResetPeak(int index);
std::string CudaRuntimeVersion();
/// The GPU's PCI bus id as NVML names it, "00000000:1B:00.0": what ties a CUDA device (whose
/// numbering follows CUDA_VISIBLE_DEVICES) to NVML's.
std::string PciBusId(int index);

/// Opaque event pair pool for StepTimer.
class EventTimer {
 public:
  explicit EventTimer(int index);
  ~EventTimer();
  void Mark();
  std::vector<double> ElapsedMs();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace runx::engine::cuda
