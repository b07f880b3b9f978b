#include "slurm/queue.h"

#include <cctype>
#include <sstream>

#include "base/process.h"
#include "base/text.h"

namespace runx::slurm {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(s);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Lines of `|`-separated fields: id, state, then `third` (exit code or reason).
JobStates Parse(const std::string& text, bool third_is_exit) {
  JobStates out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto f = Split(line, '|');
    if (f.size() < 2 || f[0].empty()) continue;
    JobState s;
    s.state = f[1].substr(0, f[1].find(' '));  // "CANCELLED by 0" -> CANCELLED
    if (f.size() > 2) (third_is_exit ? s.exit_code : s.reason) = f[2] == "None" ? "" : f[2];
    for (const auto& id : ExpandJobId(f[0])) out[id] = s;
  }
  return out;
}

// Whether `jobs` has each of `ids`, as a job or as tasks of an array (sacct may not have a job
// submitted a moment ago yet).
bool KnowsAll(const JobStates& jobs, const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    const auto task = jobs.lower_bound(id + "_");
    if (!jobs.count(id) && (task == jobs.end() || task->first.rfind(id + "_", 0) != 0)) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> ExpandJobId(const std::string& id) {
  const size_t open = id.find("_[");
  if (open == std::string::npos || id.back() != ']') return {id};
  const std::string job = id.substr(0, open);
  std::string ranges = id.substr(open + 2, id.size() - open - 3);
  ranges = ranges.substr(0, ranges.find('%'));  // the throttle
  std::vector<std::string> out;
  for (const auto& part : Split(ranges, ',')) {
    const size_t dash = part.find('-');
    const std::string a = part.substr(0, dash), b = dash == std::string::npos ? a : part.substr(dash + 1);
    if (!AllDigits(a) || !AllDigits(b) || a.size() > 9 || b.size() > 9) return {id};
    for (long i = std::stol(a); i <= std::stol(b); ++i) out.push_back(job + "_" + std::to_string(i));
  }
  return out;
}

JobStates ParseSacct(const std::string& text) { return Parse(text, true); }
JobStates ParseSqueue(const std::string& text) { return Parse(text, false); }

bool IsFinal(const std::string& state) {
  static const char* const kFinal[] = {"COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT",       "NODE_FAIL",
                                       "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY", "REVOKED"};
  for (const char* f : kFinal)
    if (state == f) return true;
  return false;
}

std::optional<std::string> ParseJobId(const std::string& sbatch_out) {
  const std::string line = base::FirstLine(sbatch_out);
  const std::string id = line.substr(0, line.find(';'));
  if (!AllDigits(id)) return std::nullopt;
  return id;
}

QueueReport QueryJobs(const std::vector<std::string>& job_ids) {
  QueueReport report;
  std::string ids;
  for (const auto& id : job_ids) ids += (ids.empty() ? "" : ",") + id;
  const auto sacct = base::RunProcess(
      {"sacct", "--noheader", "--parsable2", "--allocations", "--jobs=" + ids, "--format=JobID,State,ExitCode"});
  if (sacct.started && sacct.status == 0) {
    report.jobs = ParseSacct(sacct.out);
    report.source = "sacct";
    if (KnowsAll(report.jobs, job_ids)) return report;
  }
  // No accounting (sacct: "Slurm accounting storage is disabled"), or it does not know the jobs
  // yet: squeue knows them while they are queued and for MinJobAge after they end.
  const auto squeue =
      base::RunProcess({"squeue", "--noheader", "--array", "--states=all", "--jobs=" + ids, "--format=%i|%T|%r"});
  if (squeue.started && squeue.status == 0) {
    report.jobs = ParseSqueue(squeue.out);
    report.source = "squeue";
    return report;
  }
  if (squeue.started && squeue.err.find("Invalid job id") != std::string::npos) {
    report.source = "squeue";  // it answered: none of the jobs is known (any more)
    return report;
  }
  const auto why = [](const base::ProcessResult& r, const char* name) {
    return std::string(name) + ": " + (r.started ? base::FirstLine(r.err + "\n" + r.out) : r.error);
  };
  report.problem = why(squeue, "squeue") + "; " + why(sacct, "sacct");
  // Neither command is installed here: the package that has them.
  if (!squeue.started && !sacct.started)
    report.problem += "; SLURM's commands are not installed (Debian: slurm-client)";
  return report;
}

}  // namespace runx::slurm
