#include "outcome/failure.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <string>

namespace runx::engine {
namespace {

/// Lower-case phrases that only an allocation failure prints.
constexpr std::string_view kOutOfMemoryPhrases[] = {
    "out of memory",          // CUDA, MPS, runx's host limit ("CPU out of memory")
    "can't allocate memory",  // c10 DefaultCPUAllocator
    "not enough memory",      // c10 DefaultCPUAllocator on some platforms
    "bad_alloc",              // std::bad_alloc, also as "terminate called ... 'std::bad_alloc'"
};

}  // namespace

bool IsOutOfMemory(std::string_view message) {
  std::string lower(message);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::any_of(std::begin(kOutOfMemoryPhrases), std::end(kOutOfMemoryPhrases),
                     [&](std::string_view phrase) { return lower.find(phrase) != std::string::npos; });
}

bool IsOutOfMemoryKill(int signal) { return signal == SIGKILL; }

TrialStatus FailureStatus(std::string_view message) {
  return IsOutOfMemory(message) ? TrialStatus::kOom : TrialStatus::kFailed;
}

}  // namespace runx::engine
