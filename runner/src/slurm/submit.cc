#include "slurm/submit.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/process.h"
#include "base/remove_tree.h"
#include "base/text.h"
#include "base/time.h"
#include "slurm/queue.h"
#include "spec/compiled_package.h"
#include "store/merge.h"
#include "store/store.h"

namespace runx::slurm {
namespace {
namespace fs = std::filesystem;

// `path` made absolute against `workdir` (the process's own when "", as fs::absolute does).
fs::path Absolute(const std::string& workdir, const std::string& path) {
  std::error_code ec;
  if (workdir.empty()) return fs::absolute(path, ec);
  return fs::path(path).is_absolute() ? fs::path(path) : fs::path(workdir) / path;
}

// Writes `text` to `path`; "" or what went wrong.
std::string WriteFile(const std::string& path, const std::string& text, bool executable = false) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return fmt::format("cannot write '{}': {}", path, std::strerror(errno));
  }
  if (executable) chmod(path.c_str(), 0755);
  return "";
}

std::string Command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + ShellQuote(a);
  return out;
}

// Runs one sbatch command line; the job id, or nullopt after adding the error to `messages`.
std::optional<std::string> Sbatch(const std::vector<std::string>& argv, const std::string& what,
                                  std::vector<Message>& messages) {
  const auto r = base::RunProcess(argv);
  if (!r.started) {
    messages.push_back(Message::Error(
        fmt::format("cannot run 'sbatch': {}", r.error),
        "run runx submit where SLURM's commands are (a login node of the cluster; Debian: apt-get install "
        "slurm-client); to try it on this machine, start a one-node cluster: scripts/slurm-local.sh start"));
    return std::nullopt;
  }
  const auto id = r.status == 0 ? ParseJobId(r.out) : std::nullopt;
  if (!id) {
    const std::string said = base::FirstLine(r.err + "\n" + r.out);
    messages.push_back(Message::Error(
        fmt::format("sbatch refused {} (exit status {}): {}", what, r.status, said.empty() ? "no message" : said),
        "see the scripts with --dry-run; sinfo lists the partitions, and SLURM_CONF points at the cluster"));
    return std::nullopt;
  }
  return id;
}

// Copies the results store, as it is now, to the seed store that every task starts its own from,
// so that the tasks reuse its ok trials; the line that says so, "" when there is nothing to copy
// (or it cannot be copied: a warning says why, and every trial runs).
std::string Seed(const JobSpec& spec, std::vector<Message>& messages) {
  std::error_code ec;
  if (!fs::exists(spec.store, ec)) return "";
  try {
    const store::MergeResult r = store::MergeStores(spec.layout.SeedStore(), {spec.store});
    const auto n = [](int64_t count, const char* what) {
      return fmt::format("{} {}{}", count, what, count == 1 ? "" : "s");
    };
    return fmt::format("reuse: the tasks start from a copy of {} ({}, {}): its ok trials are not run again", spec.store,
                       n(r.total.runs_added, "run"), n(r.total.trials_added, "trial"));
  } catch (const store::StoreError& e) {
    messages.push_back(Message::Warning(
        fmt::format("the tasks cannot reuse the results of {}: {}; every trial runs", spec.store, e.what())));
    return "";
  }
}

// What `runx submit --status` reads back, but the job ids and the time.
Manifest ManifestOf(const JobSpec& spec, const std::string& name, int trials) {
  Manifest m;
  m.experiment = spec.experiment;
  m.name = name;
  m.store = spec.store;
  m.workdir = spec.workdir;
  m.shards = spec.shards;
  m.max_parallel = spec.max_parallel;
  m.shard_trials = TrialsPerShard(trials, spec.shards);
  m.overrides = spec.overrides;
  return m;
}

}  // namespace

Origin CurrentOrigin() {
  Origin o;
  std::error_code ec;
  o.runx = fs::read_symlink("/proc/self/exe", ec).string();
  if (o.runx.empty()) o.runx_error = ec.message();
  std::error_code cwd_ec;
  o.workdir = fs::current_path(cwd_ec).string();
  o.utc_stamp = base::UtcNow("%Y%m%dT%H%M%SZ");
  return o;
}

Submission MakeSubmission(const SubmitRequest& request, const nlohmann::json& config, int trials,
                          const Origin& origin) {
  if (trials == 0) throw SubmitError(fmt::format("'{}' has no trial to run", request.file));
  const int shards = request.shards > 0 ? request.shards : trials;
  if (shards > trials)
    throw SubmitError(
        fmt::format("--shards {} is more than the {} trials of '{}'", request.shards, trials, request.file),
        fmt::format("use at most --shards {} (one trial each)", trials));
  const fs::path store =
      Absolute(origin.workdir, request.db.value_or(config.value("results", "results/runx.db"))).lexically_normal();
  const fs::path dir = NewSubmissionDir(SubmissionsDirOf(store.string()), config.value("name", ""), origin.utc_stamp);
  if (const auto c = UnsafeForSbatch(dir.string()))
    throw SubmitError(
        fmt::format("the submission's folder '{}' has a character sbatch cannot take in a log path ('{}')",
                    dir.string(), std::string(1, *c)),
        "put the results store (--db) in a folder whose path has no blank, quote, backslash or '%'");
  for (const auto& path : {origin.workdir, store.string(), request.file})
    for (char c : path)
      if (c == '\n' || c == '\r')
        throw SubmitError(fmt::format("the path '{}' has a line break; the scripts cannot name it", path));

  Submission out;
  JobSpec& spec = out.spec;
  spec.runx = origin.runx;
  if (spec.runx.empty())
    throw SubmitError(fmt::format("cannot find the runx binary (/proc/self/exe): {}", origin.runx_error));
  spec.experiment = Absolute(origin.workdir, request.file).lexically_normal().string();
  spec.overrides = request.overrides;
  spec.workdir = origin.workdir;
  spec.store = store.string();
  spec.artifacts = (store.parent_path() / "artifacts").string();
  spec.compiled = runx::spec::CompiledDirFor(store.string());  // beside the merged store, as runx run has it
  spec.layout = {dir.string()};
  // The submission's folder is unique to it: its name makes the shards one sweep wherever they run.
  spec.sweep_id = "slurm:" + dir.filename().string();
  spec.job_name = "runx-" + config.value("name", std::string("experiment"));
  for (char& c : spec.job_name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
  spec.shards = shards;
  spec.max_parallel = request.max_parallel;
  spec.gpus_per_trial = request.gpus_per_trial;
  spec.cpus_per_task = request.cpus_per_task;
  spec.partition = request.partition;
  spec.time = request.time;
  spec.sbatch_options = request.sbatch_options;
  spec.setup = request.setup;
  spec.reuse = !request.no_reuse;
  spec.force = request.force;
  spec.any_build = request.any_build;

  out.manifest = ManifestOf(spec, config.value("name", ""), trials);
  const std::string device = config.value("device", "auto");
  if (device.rfind("cuda", 0) == 0 && request.gpus_per_trial == 0)
    out.warnings.push_back(Message::Warning(
        fmt::format("the experiment runs on '{}' but --gpus-per-trial is 0: the array tasks get a GPU only where the "
                    "partition gives one by default",
                    device)));
  return out;
}

std::string DryRunText(const JobSpec& spec) {
  std::string out = "# runx submit: dry run: nothing is written or submitted\n";
  out += fmt::format("# {}\n{}\n", spec.layout.ArrayScript(), ArrayScript(spec));
  out += fmt::format("# {}\n{}\n", spec.layout.MergeScript(), MergeScript(spec));
  out += fmt::format("# submitted with (ARRAY_JOB_ID: the job id the first sbatch prints):\n{}\n{}\n",
                     Command(ArraySubmitCommand(spec)), Command(MergeSubmitCommand(spec, "ARRAY_JOB_ID")));
  return out;
}

Submitted SubmitJobs(const Submission& submission) {
  const JobSpec& spec = submission.spec;
  const Layout& layout = spec.layout;
  Submitted out;
  out.manifest = submission.manifest;
  std::error_code ec;
  for (const auto& d : {layout.StoresDir(), layout.LogsDir(), layout.ExitDir()}) {
    fs::create_directories(d, ec);
    if (ec) {
      out.messages.push_back(Message::Error(fmt::format("cannot create '{}': {}", d, ec.message())));
      return out;
    }
  }
  for (const auto& [path, text] :
       {std::pair{layout.ArrayScript(), ArrayScript(spec)}, std::pair{layout.MergeScript(), MergeScript(spec)}})
    if (std::string error = WriteFile(path, text, true); !error.empty()) {
      out.messages.push_back(Message::Error(error));
      return out;
    }
  out.seeded = spec.reuse && !spec.force ? Seed(spec, out.messages) : "";
  out.manifest.submitted_at = base::UtcNow();
  const auto array_job = Sbatch(ArraySubmitCommand(spec), "the job array", out.messages);
  if (!array_job) {
    base::RemoveTree(layout.dir);  // nothing was submitted
    return out;
  }
  out.manifest.array_job = *array_job;
  const auto merge_job = Sbatch(MergeSubmitCommand(spec, *array_job), "the merge job", out.messages);
  out.manifest.merge_job = merge_job.value_or("");
  if (std::string error = WriteFile(layout.Manifest(), ToJson(out.manifest)); !error.empty()) {
    out.messages.push_back(Message::Error(error));
    return out;
  }
  if (!merge_job) {
    out.messages.push_back(Message::Note(
        fmt::format("the job array {} is submitted: cancel it with 'scancel {}', or merge its stores when it has "
                    "ended: runx merge --runners-ended {} {}/shard-*.db",
                    *array_job, *array_job, spec.store, layout.StoresDir())));
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace runx::slurm
