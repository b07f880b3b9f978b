#pragma once
// runx's count of host (CPU tensor) memory: a wrapper around LibTorch's CPU allocator that keeps
// the bytes in use, their peak, and an optional limit beyond which an allocation fails with an
// out-of-memory error instead of the kernel's OOM killer ending the process. This is what makes a
// batch-size probe on the CPU safe, and what `memory: {limit_bytes}` enforces on the host.
#include <cstdint>

namespace runx::engine::host_memory {

/// Installs the counting allocator in place of LibTorch's CPU allocator (idempotent). Tensors
/// allocated before are freed through their own allocator and never counted.
void Install();
bool Installed();
int64_t CurrentBytes();
int64_t PeakBytes();
void ResetPeak();
/// 0 = no limit.
void SetLimit(int64_t bytes);
int64_t Limit();
/// Bytes of physical memory the kernel says are available now (/proc/meminfo MemAvailable).
int64_t AvailableBytes();

}  // namespace runx::engine::host_memory
