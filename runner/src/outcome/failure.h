#pragma once
// The one place that decides whether a failure was running out of memory. Torch-free: the child
// supervisor uses it on a dead child's stderr, the trial on the exceptions it catches.
#include <string_view>

#include "runx/status.h"

namespace runx::engine {

/// The message of a trial that ran out of host memory through std::bad_alloc.
inline constexpr std::string_view kHostOutOfMemory = "out of host memory (std::bad_alloc)";

/// Whether `message` (an exception's what(), a technique failure that quotes one, or a child's
/// stderr) reports running out of memory: CUDA's "CUDA out of memory", MPS's "MPS backend out of
/// memory", runx's host limit "CPU out of memory", std::bad_alloc, c10's "DefaultCPUAllocator:
/// can't allocate memory" and "not enough memory". Case-insensitive.
bool IsOutOfMemory(std::string_view message);

/// Whether a child that died of `signal` without runx sending it most likely met the kernel's
/// out-of-memory killer: that killer sends SIGKILL, which nothing else here does.
bool IsOutOfMemoryKill(int signal);

/// The status of a trial that failed with `message`: kOom when IsOutOfMemory, else kFailed.
TrialStatus FailureStatus(std::string_view message);

}  // namespace runx::engine
