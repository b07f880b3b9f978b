#include "cli/observers.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "base/terminal.h"

namespace runx::cli {
namespace {

std::string Clock(double s) {
  const auto t = static_cast<int64_t>(s);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{}:{:02}", t / 60, t % 60);
}

const char* FateNote(engine::TrialFate fate) {
  switch (fate) {
    case engine::TrialFate::kReused:
      return "reused (an ok result of this trial is in the store; --force re-runs it)";
    case engine::TrialFate::kAlreadyInRun:
      return "done earlier in this run";
    case engine::TrialFate::kRan:
      break;
  }
  return "";
}

}  // namespace

ConsoleObserver::ConsoleObserver(const std::string& name, const std::string& file, bool quiet)
    : name_(base::Printable(name)), file_(base::Printable(file)), quiet_(quiet), tty_(isatty(fileno(stderr))) {}

double ConsoleObserver::Seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ConsoleObserver::RunStarted(int64_t run_id, const spec::Plan& plan, bool resumed) {
  total_ = plan.trials.size();
  if (quiet_) return;
  fmt::print(stderr, "runx: {} ({}): {} trial{} ({} variant{} x {} repeat{}){}, run {}\n", name_, file_, total_,
             total_ == 1 ? "" : "s", plan.variants, plan.variants == 1 ? "" : "s", plan.repeats,
             plan.repeats == 1 ? "" : "s", resumed ? ", resuming" : "", run_id);
}

void ConsoleObserver::TrialStarted(size_t index, const spec::PlannedTrial& trial) {
  index_ = index;
  label_ = base::Printable(trial.label);
  labels_[index] = label_;
  const auto placed = devices_.find(index);
  const std::string on = placed == devices_.end() ? "" : " on " + placed->second;
  if (!quiet_ && !tty_)
    fmt::print(stderr, "[{}/{}] {} (repeat {}) started{}\n", index + 1, total_, label_, trial.repeat_index, on);
}

void ConsoleObserver::TrialProgress(const nlohmann::json& ev) {
  if (quiet_) return;
  const double elapsed = Seconds();
  const std::string loss = ev.contains("loss") ? fmt::format("  loss {:.4f}", ev["loss"].get<double>()) : "";
  const std::string eta = done_ > 0 ? fmt::format("  ETA {}", Clock(elapsed / done_ * (total_ - done_))) : "";
  // With --devices, trials run side by side: the event names its trial and device.
  const size_t index = ev.contains("index") ? ev["index"].get<size_t>() : index_;
  const std::string label = ev.contains("device") ? labels_[index] + " on " + ev["device"].get<std::string>() : label_;
  const std::string line = fmt::format("[{}/{}] {}  {} {}/{}{}  |  elapsed {}{}", index + 1, total_, label,
                                       ev.value("warmup", false) ? "warm-up" : "step", ev.value("step", 0),
                                       ev.value("total", 0), loss, Clock(elapsed), eta);
  if (tty_) {
    fmt::print(stderr, "\r\033[K{}", line);
  } else if (elapsed - last_line_ > 10) {
    last_line_ = elapsed;
    fmt::print(stderr, "{}\n", line);
  }
}

void ConsoleObserver::TrialFinished(size_t index, const spec::PlannedTrial& trial, engine::TrialFate fate,
                                    const store::TrialRecord& r) {
  ++done_;
  if (quiet_) return;
  if (tty_) fmt::print(stderr, "\r\033[K");
  const std::string what = fate == engine::TrialFate::kRan ? std::string(Name(r.status)) : FateNote(fate);
  fmt::print(stderr, "[{}/{}] {}: {}{}\n", index + 1, total_, base::Printable(trial.label), what,
             r.error.empty() ? "" : " (" + base::Printable(r.error) + ")");
}

void ConsoleObserver::Waiting(size_t count, int64_t holder_run) {
  if (quiet_ || waiting_shown_) return;
  waiting_shown_ = true;
  fmt::print(stderr, "runx: waiting for {} trial{} that run {} is running (another runx on this store)\n", count,
             count == 1 ? "" : "s", holder_run);
}

void ConsoleObserver::Warning(const std::string& text) {
  fmt::print(stderr, "runx: warning: {}\n", base::Printable(text));
}

void JsonObserver::Emit(const nlohmann::json& event) {
  fmt::print("{}\n", event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::fflush(stdout);
}

void JsonObserver::RunStarted(int64_t run_id, const spec::Plan& plan, bool resumed) {
  total_ = plan.trials.size();
  Emit({{"event", "sweep_start"},
        {"run_id", run_id},
        {"sweep_id", run_id},
        {"trials", total_},
        {"variants", plan.variants},
        {"repeats", plan.repeats},
        {"resumed", resumed}});
}

void JsonObserver::TrialStarted(size_t index, const spec::PlannedTrial& t) {
  index_ = index;
  nlohmann::json e = {{"event", "trial_start"},
                      {"index", index + 1},
                      {"total", total_},
                      {"label", t.label},
                      {"repeat", t.repeat_index}};
  if (const auto placed = devices_.find(index); placed != devices_.end()) e["device"] = placed->second;
  Emit(e);
}

void JsonObserver::TrialProgress(const nlohmann::json& event) {
  nlohmann::json e = event;
  e["index"] = (event.contains("index") ? event["index"].get<size_t>() : index_) + 1;
  Emit(e);
}

void JsonObserver::TrialFinished(size_t index, const spec::PlannedTrial& t, engine::TrialFate fate,
                                 const store::TrialRecord& r) {
  const char* how = fate == engine::TrialFate::kRan ? "ran" : fate == engine::TrialFate::kReused ? "reused" : "in_run";
  // A reused trial is an ok result of an earlier run; one already in this run (a resumed run) says nothing new.
  const std::string status = fate == engine::TrialFate::kRan      ? std::string(Name(r.status))
                             : fate == engine::TrialFate::kReused ? "ok"
                                                                  : "";
  Emit({{"event", "trial_end"},
        {"index", index + 1},
        {"label", t.label},
        {"repeat", t.repeat_index},
        {"status", status},
        {"error", r.error},
        {"fate", how}});
}

void JsonObserver::Waiting(size_t count, int64_t holder_run) {
  if (count == last_waiting_) return;  // said when the number changes, not at every poll
  last_waiting_ = count;
  Emit({{"event", "waiting"}, {"trials", count}, {"holder_run", holder_run}});
}

void JsonObserver::Warning(const std::string& text) { Emit({{"event", "warning"}, {"text", text}}); }

}  // namespace runx::cli
