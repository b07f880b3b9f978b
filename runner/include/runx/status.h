#pragma once
/// The statuses of trials and runs: one vocabulary for the plugin API, the engine and the store
/// (which writes them as the texts Name() gives). No LibTorch here: torch-free modules include it.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace runx {

/// How a trial ended. Every trial ends with exactly one; only kOk trials count in the figures.
enum class TrialStatus {
  kOk,            ///< ran every step
  kFailed,        ///< an error (an exception in the runner, a model or a technique)
  kCrashed,       ///< the trial's process died (a signal, an exit without a record)
  kOom,           ///< out of memory (the device allocator, the host limit, the kernel's OOM killer)
  kTimeout,       ///< ran past the trial timeout and was killed
  kNan,           ///< the loss became NaN/Inf (the runner's check or the anomaly technique)
  kIncompatible,  ///< a technique refused the trial's configuration before the first step
};

/// Every TrialStatus, in the order messages list them.
inline constexpr std::array<TrialStatus, 7> kTrialStatuses = {
    TrialStatus::kOk,      TrialStatus::kFailed, TrialStatus::kCrashed,     TrialStatus::kOom,
    TrialStatus::kTimeout, TrialStatus::kNan,    TrialStatus::kIncompatible};

/// The status's name as the store writes it: "ok", "failed", "crashed", "oom", "timeout", "nan",
/// "incompatible".
constexpr std::string_view Name(TrialStatus s) {
  switch (s) {
    case TrialStatus::kOk:
      return "ok";
    case TrialStatus::kFailed:
      return "failed";
    case TrialStatus::kCrashed:
      return "crashed";
    case TrialStatus::kOom:
      return "oom";
    case TrialStatus::kTimeout:
      return "timeout";
    case TrialStatus::kNan:
      return "nan";
    case TrialStatus::kIncompatible:
      return "incompatible";
  }
  return "failed";
}

/// The state of a run (one invocation of runx).
enum class RunStatus {
  kRunning,      ///< its runx is (or, until the next runx opens the store and checks, was) running
  kOk,           ///< every planned trial has a result (whatever its status)
  kFailed,       ///< the run stopped on an error of its own (not a trial's)
  kInterrupted,  ///< stopped by a signal, or its process died; `--resume` continues it
};

inline constexpr std::array<RunStatus, 4> kRunStatuses = {RunStatus::kRunning, RunStatus::kOk, RunStatus::kFailed,
                                                          RunStatus::kInterrupted};

constexpr std::string_view Name(RunStatus s) {
  switch (s) {
    case RunStatus::kRunning:
      return "running";
    case RunStatus::kOk:
      return "ok";
    case RunStatus::kFailed:
      return "failed";
    case RunStatus::kInterrupted:
      return "interrupted";
  }
  return "failed";
}

/// The value of `all` whose Name() is `name`, or nullopt.
template <typename Status, size_t N>
constexpr std::optional<Status> ParseStatus(const std::array<Status, N>& all, std::string_view name) {
  for (Status s : all)
    if (Name(s) == name) return s;
  return std::nullopt;
}

/// The status named `name` ("ok", "oom", ...; "running", "interrupted", ...), or nullopt.
constexpr std::optional<TrialStatus> ParseTrialStatus(std::string_view name) {
  return ParseStatus(kTrialStatuses, name);
}
constexpr std::optional<RunStatus> ParseRunStatus(std::string_view name) { return ParseStatus(kRunStatuses, name); }

}  // namespace runx
