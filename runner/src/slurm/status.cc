#include "slurm/status.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "base/files.h"
#include "base/text.h"
#include "store/run_progress.h"
#include "store/store.h"

namespace runx::slurm {
namespace {
namespace fs = std::filesystem;

// The exit status a job wrote into the submission's folder when it ended.
std::optional<int> ReadExit(const std::string& path) {
  const auto text = base::ReadFile(path);
  if (!text) return std::nullopt;
  try {
    return std::stoi(*text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The last line of a log that is not blank; "" when none.
std::string LastLogLine(const std::string& path) { return base::LastLine(base::ReadFile(path).value_or("")); }

std::string StateOf(const QueueReport& q, const std::string& job) {
  const auto it = q.jobs.find(job);
  if (it == q.jobs.end()) return q.source.empty() ? "unknown" : "not known to " + q.source;
  return it->second.state;
}

// What shard i's results store says, and the last line of its log when it ended badly.
std::string ShardResults(const Layout& layout, const Manifest& m, const JobStatus& row, int i) {
  const std::string shard = std::to_string(i);
  const std::string store = layout.ShardStore(shard);
  const int planned = m.shard_trials[static_cast<size_t>(i)];
  std::string results;
  std::error_code ec;
  if (!fs::exists(store, ec)) {
    results = "no results store";
  } else {
    try {
      const auto run = store::FindRunProgress(store, "--db " + store);
      if (!run) {
        results = "results store started, no run yet";
      } else {
        results = fmt::format("run {}: {} of {} trials, {} ok", run->status, run->trials, planned, run->ok_trials);
        if (run->reused_trials > 0) results += fmt::format(", {} reused", run->reused_trials);
      }
    } catch (const store::StoreError& e) {
      results = fmt::format("results store unreadable: {}", e.what());
    }
  }
  const bool ended_badly = (row.exit && *row.exit != 0) || (!row.exit && IsFinal(row.state));
  if (ended_badly) {
    const std::string last = LastLogLine(layout.ShardLog(shard, "err"));
    results += fmt::format("; {}: {}", fs::path(layout.ShardLog(shard, "err")).filename().string(),
                           last.empty() ? "(empty)" : last);
  }
  return results;
}

JobStatus ReadShard(const Layout& layout, const Manifest& m, const QueueReport& q, int i) {
  JobStatus row;
  row.name = std::to_string(i);
  row.job = fmt::format("{}_{}", m.array_job, i);
  row.state = StateOf(q, row.job);
  row.exit = ReadExit(layout.ShardExit(row.name));
  row.ok = row.exit == 0;
  row.results = ShardResults(layout, m, row, i);
  return row;
}

JobStatus ReadMerge(const Layout& layout, const Manifest& m, const QueueReport& q) {
  JobStatus row;
  row.name = "merge";
  row.job = m.merge_job.empty() ? "-" : m.merge_job;
  row.state = m.merge_job.empty() ? "not submitted" : StateOf(q, m.merge_job);
  row.exit = ReadExit(layout.MergeExit());
  row.ok = row.exit == 0;
  if (row.exit) {
    const std::string log = layout.MergeLog(*row.exit == 0 ? "out" : "err");
    row.results = LastLogLine(log);
    if (row.results.empty()) row.results = "see " + log;
  } else if (m.merge_job.empty() || IsFinal(row.state)) {
    row.results = "did not merge";
  } else {
    row.results = "runs when every array task has ended";
  }
  return row;
}

}  // namespace

Manifest ReadSubmission(const Layout& layout) {
  const auto text = base::ReadFile(layout.Manifest());
  if (!text)
    throw SubmitError(fmt::format("'{}' is not a submission's folder (it has no submission.json)", layout.dir));
  try {
    return ManifestFromJson(*text);
  } catch (const std::runtime_error& e) {
    throw SubmitError(fmt::format("cannot read '{}': {}", layout.Manifest(), e.what()));
  }
}

std::string LatestSubmissionFor(const std::string& store) {
  const std::string parent = SubmissionsDirOf(fs::absolute(fs::path(store)).lexically_normal().string());
  const auto latest = LatestSubmissionDir(parent);
  if (!latest)
    throw SubmitError(fmt::format("no submission in '{}'", parent), "name its folder: runx submit --status DIR");
  return *latest;
}

std::string CountStates(const QueueReport& q, const Manifest& m) {
  std::vector<std::pair<std::string, int>> counts;
  for (int i = 0; i < m.shards; ++i) {
    const std::string s = StateOf(q, fmt::format("{}_{}", m.array_job, i));
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == s; });
    if (it == counts.end())
      counts.push_back({s, 1});
    else
      ++it->second;
  }
  std::string out;
  for (const auto& [state, n] : counts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, state);
  return out;
}

std::string ProgressLine(const QueueReport& q, const Manifest& m) {
  const auto it = q.jobs.find(m.merge_job);
  const std::string reason = it != q.jobs.end() && !it->second.reason.empty() ? " (" + it->second.reason + ")" : "";
  return fmt::format("shards: {}; merge: {}{}", CountStates(q, m), StateOf(q, m.merge_job), reason);
}

void WaitForSubmission(const Layout& layout, const Manifest& m, const std::function<void(const Message&)>& say) {
  using Clock = std::chrono::steady_clock;
  say(Message::Note(fmt::format("waiting for job array {} and merge job {} (Ctrl-C stops waiting; the jobs go on)",
                                m.array_job, m.merge_job)));
  std::string last, problem;
  // The merge job's exit status is looked for twice a second (a file); SLURM is asked less and
  // less often, from every second up to every 10 seconds, to spare the controller.
  auto interval = std::chrono::milliseconds(1000);
  auto next_query = Clock::now();
  std::error_code ec;
  for (;; std::this_thread::sleep_for(std::chrono::milliseconds(500))) {
    if (fs::exists(layout.MergeExit(), ec)) return;
    if (Clock::now() < next_query) continue;
    next_query = Clock::now() + interval;
    interval = std::min(interval * 3 / 2, std::chrono::milliseconds(10000));
    const auto q = QueryJobs({m.array_job, m.merge_job});
    if (q.source.empty()) {
      if (q.problem != problem)
        say(Message::Warning(fmt::format("SLURM does not answer ({}); still waiting", q.problem)));
      problem = q.problem;
      continue;
    }
    const std::string now = ProgressLine(q, m);
    if (now != last) say(Message::Note(now));
    last = now;
    if (q.jobs.find(m.merge_job) == q.jobs.end() || IsFinal(StateOf(q, m.merge_job))) {
      // Its exit status may reach a shared file system a moment after SLURM saw the job end.
      for (int i = 0; i < 20 && !fs::exists(layout.MergeExit(), ec); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      return;
    }
  }
}

SubmissionStatus ReadStatus(const Layout& layout, const Manifest& m, const QueueReport& q) {
  SubmissionStatus s;
  s.source = q.source;
  s.problem = q.problem;
  for (int n : m.shard_trials) s.trials += n;
  for (int i = 0; i < m.shards; ++i) {
    JobStatus row = ReadShard(layout, m, q, i);
    s.ok_shards += row.ok;
    s.ended_shards += row.exit.has_value() || IsFinal(row.state);
    s.shards.push_back(std::move(row));
  }
  s.merge = ReadMerge(layout, m, q);
  s.merged = s.merge.exit == 0;
  s.merge_did_not_run = !s.merge.exit && (m.merge_job.empty() || IsFinal(s.merge.state));
  return s;
}

SubmissionStatus ReadStatus(const Layout& layout, const Manifest& m) {
  return ReadStatus(layout, m, QueryJobs({m.array_job, m.merge_job}));
}

}  // namespace runx::slurm
