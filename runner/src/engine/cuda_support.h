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
