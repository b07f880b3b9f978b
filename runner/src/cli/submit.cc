#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/process.h"
#include "base/remove_tree.h"
#include "base/text.h"
#include "base/time.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/submit.h"
#include "plugins/dirs.h"
#include "slurm/layout.h"
#include "slurm/queue.h"
#include "slurm/script.h"
#include "spec/compiled_package.h"
#include "store/merge.h"
#include "store/store.h"

namespace runx::cli {
namespace {
namespace fs = std::filesystem;

constexpr const char* kPrefix = "runx submit: ";

bool WriteFile(const std::string& path, const std::string& text, bool executable = false) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      SubmitError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
      return false;
    }
  }
  if (executable) chmod(path.c_str(), 0755);
  return true;
}

std::string Command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + slurm::ShellQuote(a);
  return out;
}

// Runs one sbatch command line; the job id, or nullopt after saying why.
std::optional<std::string> Sbatch(const std::vector<std::string>& argv, const std::string& what) {
  const auto r = base::RunProcess(argv);
  if (!r.started) {
    SubmitError(fmt::format("cannot run 'sbatch': {}", r.error),
                "run runx submit where SLURM's commands are (a login node of the cluster; Debian: apt-get install "
                "slurm-client); to try it on this machine, start a one-node cluster: scripts/slurm-local.sh start");
    return std::nullopt;
  }
  const auto id = r.status == 0 ? slurm::ParseJobId(r.out) : std::nullopt;
  if (!id) {
    const std::string said = base::FirstLine(r.err + "\n" + r.out);
    SubmitError(
        fmt::format("sbatch refused {} (exit status {}): {}", what, r.status, said.empty() ? "no message" : said),
        "see the scripts with --dry-run; sinfo lists the partitions, and SLURM_CONF points at the cluster");
    return std::nullopt;
  }
  return id;
}

// The scripts and the commands that would submit them.
void PrintDryRun(const slurm::JobSpec& spec) {
  fmt::print("# {}dry run: nothing is written or submitted\n", kPrefix);
  fmt::print("# {}\n{}\n", spec.layout.ArrayScript(), slurm::ArrayScript(spec));
  fmt::print("# {}\n{}\n", spec.layout.MergeScript(), slurm::MergeScript(spec));
  fmt::print("# submitted with (ARRAY_JOB_ID: the job id the first sbatch prints):\n{}\n{}\n",
             Command(slurm::ArraySubmitCommand(spec)), Command(slurm::MergeSubmitCommand(spec, "ARRAY_JOB_ID")));
}

// Copies the results store, as it is now, to the seed store that every task starts its own from,
// so that the tasks reuse its ok trials; the line that says so, "" when there is nothing to copy
// (or it cannot be copied: a warning says why, and every trial runs).
std::string Seed(const slurm::JobSpec& spec) {
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
    fmt::print(stderr, "runx: warning: the tasks cannot reuse the results of {}: {}; every trial runs\n",
               spec.store, e.what());
    return "";
  }
}

// What `runx submit --status` reads back, but the job ids and the time.
slurm::Manifest ManifestOf(const slurm::JobSpec& spec, const std::string& name, int trials) {
  slurm::Manifest m;
  m.experiment = spec.experiment;
  m.name = name;
  m.store = spec.store;
  m.workdir = spec.workdir;
  m.shards = spec.shards;
  m.max_parallel = spec.max_parallel;
  m.shard_trials = slurm::TrialsPerShard(trials, spec.shards);
  m.overrides = spec.overrides;
  return m;
}

// The job spec of `args`; nullopt (after saying why) when the input is invalid.
std::optional<slurm::JobSpec> MakeSpec(const SubmitArgs& args, const LoadedPlan& loaded, slurm::Manifest& manifest) {
  const auto& exp = loaded.experiment;
  const int trials = static_cast<int>(loaded.full.trials.size());
  if (trials == 0) {
    SubmitError(fmt::format("'{}' has no trial to run", args.file));
    return std::nullopt;
  }
  const int shards = args.shards > 0 ? args.shards : trials;
  if (shards > trials) {
    SubmitError(fmt::format("--shards {} is more than the {} trials of '{}'", args.shards, trials, args.file),
                fmt::format("use at most --shards {} (one trial each)", trials));
    return std::nullopt;
  }
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  const fs::path store =
      fs::absolute(args.db.value_or(exp.config.value("results", "results/runx.db")), ec).lexically_normal();
  const fs::path dir = slurm::NewSubmissionDir((store.parent_path() / "slurm").string(), exp.config.value("name", ""),
                                               base::UtcNow("%Y%m%dT%H%M%SZ"));
  if (const auto c = slurm::UnsafeForSbatch(dir.string())) {
    SubmitError(fmt::format("the submission's folder '{}' has a character sbatch cannot take in a log path ('{}')",
                            dir.string(), std::string(1, *c)),
                "put the results store (--db) in a folder whose path has no blank, quote, backslash or '%'");
    return std::nullopt;
  }
  for (const auto& path : {cwd.string(), store.string(), args.file})
    for (char c : path)
      if (c == '\n' || c == '\r') {
        SubmitError(fmt::format("the path '{}' has a line break; the scripts cannot name it", path));
        return std::nullopt;
      }

  slurm::JobSpec spec;
  spec.runx = fs::read_symlink("/proc/self/exe", ec).string();
  if (spec.runx.empty()) {
    SubmitError(fmt::format("cannot find the runx binary (/proc/self/exe): {}", ec.message()));
    return std::nullopt;
  }
  spec.experiment = fs::absolute(args.file).lexically_normal().string();
  spec.overrides = args.overrides;
  spec.workdir = cwd.string();
  spec.store = store.string();
  spec.artifacts = (store.parent_path() / "artifacts").string();
  spec.compiled = runx::spec::CompiledDirFor(store.string());  // beside the merged store, as runx run has it
  spec.layout = {dir.string()};
  // The submission's folder is unique to it: its name makes the shards one sweep wherever they run.
  spec.sweep_id = "slurm:" + dir.filename().string();
  spec.job_name = "runx-" + exp.config.value("name", std::string("experiment"));
  for (char& c : spec.job_name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
  spec.shards = shards;
  spec.max_parallel = args.max_parallel;
  spec.gpus_per_trial = args.gpus_per_trial;
  spec.cpus_per_task = args.cpus_per_task;
  spec.partition = args.partition;
  spec.time = args.time;
  spec.sbatch_options = args.sbatch_options;
  spec.setup = args.setup;
  spec.reuse = !args.no_reuse;
  spec.force = args.force;
  spec.any_build = args.any_build;

  manifest = ManifestOf(spec, exp.config.value("name", ""), trials);
  const std::string device = exp.config.value("device", "auto");
  if (device.rfind("cuda", 0) == 0 && args.gpus_per_trial == 0)
    fmt::print(stderr,
               "runx: warning: the experiment runs on '{}' but --gpus-per-trial is 0: the array tasks get a GPU "
               "only where the partition gives one by default\n",
               device);
  return spec;
}

}  // namespace

int Submit(const SubmitArgs& args) {
  if (args.status) return SubmitStatus(args);
  if (args.file.empty()) {
    SubmitError("name the experiment file to submit, or --status to see what a submission did",
                "runx submit FILE --slurm [--partition P] [--gpus-per-trial N] [--time T] [--max-parallel K]");
    return 2;
  }
  if (!args.slurm) {
    SubmitError("name the scheduler to submit to: --slurm (the only one runx submits to)",
                fmt::format("runx submit {} --slurm", args.file));
    return 2;
  }
  if (args.shards < 0 || args.max_parallel < 0 || args.gpus_per_trial < 0 || args.cpus_per_task < 0) {
    SubmitError("--shards, --max-parallel, --gpus-per-trial and --cpus-per-task take a number of at least 0");
    return 2;
  }
  const auto schemas = spec::SchemaSet::Load(plugins::PluginDirs());
  const auto loaded = LoadPlan(args.file, args.overrides, std::nullopt, schemas);
  if (!loaded) return 2;
  slurm::Manifest manifest;
  const auto spec = MakeSpec(args, *loaded, manifest);
  if (!spec) return 2;
  if (args.dry_run) {
    PrintDryRun(*spec);
    return 0;
  }

  const slurm::Layout& layout = spec->layout;
  std::error_code ec;
  for (const auto& d : {layout.StoresDir(), layout.LogsDir(), layout.ExitDir()}) {
    fs::create_directories(d, ec);
    if (ec) {
      SubmitError(fmt::format("cannot create '{}': {}", d, ec.message()));
      return 1;
    }
  }
  if (!WriteFile(layout.ArrayScript(), slurm::ArrayScript(*spec), true) ||
      !WriteFile(layout.MergeScript(), slurm::MergeScript(*spec), true))
    return 1;
  const std::string seeded = spec->reuse && !spec->force ? Seed(*spec) : "";
  manifest.submitted_at = base::UtcNow();
  const auto array_job = Sbatch(slurm::ArraySubmitCommand(*spec), "the job array");
  if (!array_job) {
    base::RemoveTree(layout.dir);  // nothing was submitted
    return 1;
  }
  manifest.array_job = *array_job;
  const auto merge_job = Sbatch(slurm::MergeSubmitCommand(*spec, *array_job), "the merge job");
  manifest.merge_job = merge_job.value_or("");
  if (!WriteFile(layout.Manifest(), slurm::ToJson(manifest))) return 1;
  if (!merge_job) {
    fmt::print(stderr,
               "{}the job array {} is submitted: cancel it with 'scancel {}', or merge its stores when it has "
               "ended: runx merge --runners-ended {} {}/shard-*.db\n",
               kPrefix, *array_job, *array_job, spec->store, layout.StoresDir());
    return 1;
  }
  const std::string throttle = args.max_parallel > 0 && args.max_parallel < spec->shards
                                   ? fmt::format(", at most {} at a time", args.max_parallel)
                                   : "";
  fmt::print("{}{} ({}): {} trials in {} shards\n", kPrefix, manifest.name, args.file, loaded->full.trials.size(),
             spec->shards);
  fmt::print("submitted job array {} ({} tasks{}) and merge job {} (runs when every task has ended)\n", *array_job,
             spec->shards, throttle, *merge_job);
  fmt::print("scripts, logs and shard stores: {}\n", layout.dir);
  if (!seeded.empty()) fmt::print("{}\n", seeded);
  fmt::print("results: {} (after the merge)\n", spec->store);
  if (!args.wait) {
    fmt::print("status: runx submit --status {}\n", layout.dir);
    return 0;
  }
  WaitForSubmission(layout, manifest);
  return PrintSubmissionStatus(layout, manifest) ? 0 : 1;
}

}  // namespace runx::cli
