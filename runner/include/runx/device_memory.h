#pragma once
/// Device memory for techniques: the caching allocators of CUDA and MPS, read and steered the
/// same way on both (and answered honestly where a device has none). Header-only so that plugins,
/// which link only the plugin API, can use it; CUDA parts only where LibTorch has CUDA.
#include <cstdint>
#include <string>

#include <c10/core/Device.h>

#include "runx/compat.h"

#ifdef RUNX_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

namespace runx::device_memory {

/// Whether `device` has a caching allocator whose cache can be released (CUDA, MPS).
inline bool HasCache(const c10::Device& device) {
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) return true;
#endif
  return device.is_mps() && compat::MpsAvailable();
}

/// Returns cached, unused blocks to the driver. No-op where there is no cache.
inline void ReleaseCache(const c10::Device& device) {
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) return c10::cuda::CUDACachingAllocator::emptyCache();
#endif
  if (device.is_mps()) compat::MpsEmptyCache();
}

/// Bytes held by live tensors now; -1 where unknown.
inline int64_t AllocatedBytes(const c10::Device& device) {
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.has_index() ? device.index() : 0);
    return stats.allocated_bytes[0].current;
  }
#endif
  if (device.is_mps()) return static_cast<int64_t>(compat::MpsAllocatedBytes());
  return -1;
}

/// Bytes the allocator holds from the driver (live + cached); -1 where there is no cache.
inline int64_t ReservedBytes(const c10::Device& device) {
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.has_index() ? device.index() : 0);
    return stats.reserved_bytes[0].current;
  }
#endif
  (void)device;
  return -1;
}

/// Total memory of the device in bytes; 0 where unknown.
inline int64_t TotalBytes(const c10::Device& device) {
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) {
    size_t free = 0, total = 0;
    c10::cuda::CUDAGuard guard(device.has_index() ? device.index() : 0);
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) return static_cast<int64_t>(total);
  }
#endif
  (void)device;
  return 0;
}

/// Limits the allocator to `fraction` of the device (CUDA: of total memory, 0-1; MPS: of the
/// recommended working set, 0-2). False where the device has no such limit; `why` says so.
inline bool SetMemoryFraction(const c10::Device& device, double fraction, std::string* why) {
#ifdef RUNX_WITH_CUDA
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, device.has_index() ? device.index() : 0);
    return true;
  }
#endif
  if (device.is_mps()) {
    if (compat::MpsSetMemoryFraction(fraction)) return true;
    if (why) *why = "this LibTorch cannot limit MPS memory (needs 2.1 or later, with MPS)";
    return false;
  }
  if (why) *why = "no device memory fraction on " + device.str() + "; use limit_bytes for the host";
  return false;
}

}  // namespace runx::device_memory
