#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/load.h"
#include "cli/submit.h"
#include "plugins/dirs.h"
#include "slurm/status.h"
#include "slurm/submit.h"

namespace runx::cli {
namespace {

void Error(const std::string& what, const std::string& hint = "") { PrintMessage(slurm::Message::Error(what, hint)); }

void PrintSubmitted(const SubmitArgs& args, size_t trials, const slurm::JobSpec& spec, const slurm::Submitted& done) {
  const slurm::Manifest& m = done.manifest;
  const std::string throttle = args.max_parallel > 0 && args.max_parallel < spec.shards
                                   ? fmt::format(", at most {} at a time", args.max_parallel)
                                   : "";
  fmt::print("runx submit: {} ({}): {} trials in {} shards\n", m.name, args.file, trials, spec.shards);
  fmt::print("submitted job array {} ({} tasks{}) and merge job {} (runs when every task has ended)\n", m.array_job,
             spec.shards, throttle, m.merge_job);
  fmt::print("scripts, logs and shard stores: {}\n", spec.layout.dir);
  if (!done.seeded.empty()) fmt::print("{}\n", done.seeded);
  fmt::print("results: {} (after the merge)\n", spec.store);
}

}  // namespace

int Submit(const SubmitArgs& args) {
  if (args.status) return SubmitStatus(args);
  if (args.file.empty()) {
    Error("name the experiment file to submit, or --status to see what a submission did",
          "runx submit FILE --slurm [--partition P] [--gpus-per-trial N] [--time T] [--max-parallel K]");
    return 2;
  }
  if (!args.slurm) {
    Error("name the scheduler to submit to: --slurm (the only one runx submits to)",
          fmt::format("runx submit {} --slurm", args.file));
    return 2;
  }
  if (args.shards < 0 || args.max_parallel < 0 || args.gpus_per_trial < 0 || args.cpus_per_task < 0) {
    Error("--shards, --max-parallel, --gpus-per-trial and --cpus-per-task take a number of at least 0");
    return 2;
  }
  const auto schemas = spec::SchemaSet::Load(plugins::PluginDirs());
  const auto loaded = LoadPlan(args.file, args.overrides, std::nullopt, schemas);
  if (!loaded) return 2;
  slurm::Submission submission;
  try {
    submission = slurm::MakeSubmission(args, loaded->experiment.config, static_cast<int>(loaded->full.trials.size()));
  } catch (const slurm::SubmitError& e) {
    Error(e.what(), e.hint());
    return 2;
  }
  for (const auto& w : submission.warnings) PrintMessage(w);
  if (args.dry_run) {
    fmt::print("{}", slurm::DryRunText(submission.spec));
    return 0;
  }
  const slurm::Submitted done = slurm::SubmitJobs(submission);
  for (const auto& m : done.messages) PrintMessage(m);
  if (!done.ok) return 1;
  PrintSubmitted(args, loaded->full.trials.size(), submission.spec, done);
  const slurm::Layout& layout = submission.spec.layout;
  if (!args.wait) {
    fmt::print("status: runx submit --status {}\n", layout.dir);
    return 0;
  }
  slurm::WaitForSubmission(layout, done.manifest, PrintMessage);
  return PrintSubmissionStatus(layout, done.manifest) ? 0 : 1;
}

}  // namespace runx::cli
