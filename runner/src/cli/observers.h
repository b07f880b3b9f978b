#pragma once
// How `runx run` shows a sweep: progress and results for people on stderr, or one JSON object a
// line on stdout (--json).
#include <chrono>
#include <cstddef>
#include <map>
#include <string>

#include "sweep/sweep.h"

namespace runx::cli {

/// Progress for people on stderr: one line per trial, and the running trial's step counter and
/// ETA redrawn in place on a terminal (a line every 10 s otherwise). --quiet: nothing.
class ConsoleObserver : public engine::SweepObserver {
 public:
  ConsoleObserver(const std::string& name, const std::string& file, bool quiet);
  void RunStarted(int64_t run_id, const spec::Plan& plan, bool resumed) override;
  void TrialPlaced(size_t index, const std::string& device) override { devices_[index] = device; }
  void TrialStarted(size_t index, const spec::PlannedTrial& trial) override;
  void TrialProgress(const nlohmann::json& event) override;
  void TrialFinished(size_t index, const spec::PlannedTrial& trial, engine::TrialFate fate,
                     const store::TrialRecord& record) override;
  void Waiting(size_t count, int64_t holder_run) override;
  void Warning(const std::string& text) override;

 private:
  std::map<size_t, std::string> devices_, labels_;  // --devices: where each trial runs, and its label
  double Seconds() const;
  std::string name_, file_;
  bool quiet_, tty_;
  size_t total_ = 0, index_ = 0, done_ = 0;
  std::string label_;
  double last_line_ = 0;
  bool waiting_shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

/// One JSON object a line on stdout: sweep_start, trial_start, progress, trial_end, waiting,
/// warning (the caller adds sweep_end).
class JsonObserver : public engine::SweepObserver {
 public:
  void RunStarted(int64_t run_id, const spec::Plan& plan, bool resumed) override;
  void TrialPlaced(size_t index, const std::string& device) override { devices_[index] = device; }
  void TrialStarted(size_t index, const spec::PlannedTrial& trial) override;
  void TrialProgress(const nlohmann::json& event) override;
  void TrialFinished(size_t index, const spec::PlannedTrial& trial, engine::TrialFate fate,
                     const store::TrialRecord& record) override;
  void Waiting(size_t count, int64_t holder_run) override;
  void Warning(const std::string& text) override;
  static void Emit(const nlohmann::json& event);

 private:
  size_t total_ = 0, index_ = 0, last_waiting_ = 0;
  std::map<size_t, std::string> devices_;  // --devices: where each trial runs
};

}  // namespace runx::cli
