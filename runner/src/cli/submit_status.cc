#include "cli/submit.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "base/files.h"
#include "base/text.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "plugins/dirs.h"
#include "report/table.h"
#include "slurm/queue.h"
#include "store/run_progress.h"
#include "store/store.h"

namespace runx::cli {
namespace {
namespace fs = std::filesystem;

constexpr const char* kPrefix = "runx submit: ";

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

std::string StateOf(const slurm::QueueReport& q, const std::string& job) {
  const auto it = q.jobs.find(job);
  if (it == q.jobs.end()) return q.source.empty() ? "unknown" : "not known to " + q.source;
  return it->second.state;
}

// "2 RUNNING, 1 PENDING": the array tasks by state, in the order first seen.
std::string CountStates(const slurm::QueueReport& q, const slurm::Manifest& m) {
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

struct ShardRow {
  std::string state;
  std::optional<int> exit;
  std::string results;
  bool ok = false;
};

ShardRow ReadShard(const slurm::Layout& layout, const slurm::Manifest& m, const slurm::QueueReport& q, int i) {
  ShardRow row;
  const std::string shard = std::to_string(i);
  row.state = StateOf(q, fmt::format("{}_{}", m.array_job, i));
  row.exit = ReadExit(layout.ShardExit(shard));
  row.ok = row.exit == 0;
  const std::string store = layout.ShardStore(shard);
  const int planned = m.shard_trials[static_cast<size_t>(i)];
  std::error_code ec;
  if (!fs::exists(store, ec)) {
    row.results = "no results store";
  } else {
    try {
      const auto run = store::FindRunProgress(store, "--db " + store);
      if (!run) {
        row.results = "results store started, no run yet";
      } else {
        row.results = fmt::format("run {}: {} of {} trials, {} ok", run->status, run->trials, planned, run->ok_trials);
        if (run->reused_trials > 0) row.results += fmt::format(", {} reused", run->reused_trials);
      }
    } catch (const store::StoreError& e) {
      row.results = fmt::format("results store unreadable: {}", e.what());
    }
  }
  const bool ended_badly = (row.exit && *row.exit != 0) || (!row.exit && slurm::IsFinal(row.state));
  if (ended_badly) {
    const std::string last = LastLogLine(layout.ShardLog(shard, "err"));
    row.results += fmt::format("; {}: {}", fs::path(layout.ShardLog(shard, "err")).filename().string(),
                               last.empty() ? "(empty)" : last);
  }
  return row;
}

}  // namespace

void SubmitError(const std::string& what, const std::string& hint) {
  fmt::print(stderr, "runx: error: {}\n", what);
  if (!hint.empty()) fmt::print(stderr, "hint: {}\n", hint);
}

std::optional<slurm::Manifest> ReadSubmission(const slurm::Layout& layout) {
  const auto text = base::ReadFile(layout.Manifest());
  if (!text) {
    SubmitError(fmt::format("'{}' is not a submission's folder (it has no submission.json)", layout.dir));
    return std::nullopt;
  }
  try {
    return slurm::ManifestFromJson(*text);
  } catch (const std::runtime_error& e) {
    SubmitError(fmt::format("cannot read '{}': {}", layout.Manifest(), e.what()));
    return std::nullopt;
  }
}

void WaitForSubmission(const slurm::Layout& layout, const slurm::Manifest& m) {
  using Clock = std::chrono::steady_clock;
  fmt::print(stderr, "{}waiting for job array {} and merge job {} (Ctrl-C stops waiting; the jobs go on)\n", kPrefix,
             m.array_job, m.merge_job);
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
    const auto q = slurm::QueryJobs({m.array_job, m.merge_job});
    if (q.source.empty()) {
      if (q.problem != problem)
        fmt::print(stderr, "runx: warning: SLURM does not answer ({}); still waiting\n", q.problem);
      problem = q.problem;
      continue;
    }
    const auto it = q.jobs.find(m.merge_job);
    const std::string merge = StateOf(q, m.merge_job);
    const std::string reason = it != q.jobs.end() && !it->second.reason.empty() ? " (" + it->second.reason + ")" : "";
    const std::string now = fmt::format("shards: {}; merge: {}{}", CountStates(q, m), merge, reason);
    if (now != last) fmt::print(stderr, "{}{}\n", kPrefix, now);
    last = now;
    if (it == q.jobs.end() || slurm::IsFinal(merge)) {
      // Its exit status may reach a shared file system a moment after SLURM saw the job end.
      for (int i = 0; i < 20 && !fs::exists(layout.MergeExit(), ec); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      return;
    }
  }
}

bool PrintSubmissionStatus(const slurm::Layout& layout, const slurm::Manifest& m) {
  const auto q = slurm::QueryJobs({m.array_job, m.merge_job});
  int total = 0;
  for (int n : m.shard_trials) total += n;
  fmt::print("submission {}\n", layout.dir);
  fmt::print("  {} ({}): {} trials in {} shards, submitted {}\n", m.name, m.experiment, total, m.shards,
             m.submitted_at);
  fmt::print("  results store: {}\n", m.store);
  fmt::print("  job states: {}\n\n", q.source.empty() ? "unknown (" + q.problem + ")" : "from " + q.source);

  report::TextTable table{{"shard", "job", "state", "exit", "results"}, {false, false, false, true, false}, {}};
  int ok_shards = 0, ended_shards = 0;
  for (int i = 0; i < m.shards; ++i) {
    const ShardRow row = ReadShard(layout, m, q, i);
    ok_shards += row.ok;
    ended_shards += row.exit.has_value() || slurm::IsFinal(row.state);
    table.rows.push_back({std::to_string(i), fmt::format("{}_{}", m.array_job, i), row.state,
                          row.exit ? std::to_string(*row.exit) : "-", row.results});
  }
  const auto merge_exit = ReadExit(layout.MergeExit());
  const std::string merge_state = m.merge_job.empty() ? "not submitted" : StateOf(q, m.merge_job);
  std::string merge_text;
  if (merge_exit) {
    const std::string log = layout.MergeLog(*merge_exit == 0 ? "out" : "err");
    merge_text = LastLogLine(log);
    if (merge_text.empty()) merge_text = "see " + log;
  } else if (m.merge_job.empty() || slurm::IsFinal(merge_state)) {
    merge_text = "did not merge";
  } else {
    merge_text = "runs when every array task has ended";
  }
  table.rows.push_back({"merge", m.merge_job.empty() ? "-" : m.merge_job, merge_state,
                        merge_exit ? std::to_string(*merge_exit) : "-", merge_text});
  fmt::print("{}\n", report::RenderText(table));

  const bool merged = merge_exit == 0;
  if (ended_shards > ok_shards)
    fmt::print("{} of {} shards did not end ok: submitting the same again runs only the trials {} lacks\n",
               ended_shards - ok_shards, m.shards, m.store);
  if (merged) {
    fmt::print("merged into {}: runx history {} --db {}\n", m.store, m.name, m.store);
  } else if (!merge_exit && (m.merge_job.empty() || slurm::IsFinal(merge_state))) {
    fmt::print("the merge did not run: merge the shard stores with: runx merge --runners-ended {} {}/shard-*.db\n",
               m.store, layout.StoresDir());
  }
  return merged && ok_shards == m.shards;
}

int SubmitStatus(const SubmitArgs& args) {
  std::string dir = *args.status;
  if (dir.empty()) {
    std::string store = args.db.value_or("results/runx.db");
    if (!args.db && !args.file.empty()) {  // the experiment's own store
      const auto loaded =
          LoadPlan(args.file, args.overrides, std::nullopt, spec::SchemaSet::Load(plugins::PluginDirs()));
      if (!loaded) return 2;
      store = loaded->experiment.config.value("results", store);
    }
    const fs::path parent = fs::absolute(fs::path(store)).lexically_normal().parent_path() / "slurm";
    const auto latest = slurm::LatestSubmissionDir(parent.string());
    if (!latest) {
      SubmitError(fmt::format("no submission in '{}'", parent.string()), "name its folder: runx submit --status DIR");
      return 2;
    }
    dir = *latest;
  }
  const slurm::Layout layout{fs::absolute(dir).lexically_normal().string()};
  const auto manifest = ReadSubmission(layout);
  if (!manifest) return 2;
  if (args.wait) WaitForSubmission(layout, *manifest);
  const bool ok = PrintSubmissionStatus(layout, *manifest);
  return args.wait && !ok ? 1 : 0;
}

}  // namespace runx::cli
