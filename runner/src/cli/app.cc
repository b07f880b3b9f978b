#include <algorithm>
#include <iterator>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "engine/child.h"
#include "version.h"

namespace runx::cli {

namespace {

const char* const kSubcommands[] = {"run",    "validate", "plan",    "query",   "compare", "history", "report",
                                    "merge",  "submit",   "doctor",  "plugins", "trial",   "data",    "compile",
                                    "help"};

/// `runx FILE ...` is `runx run FILE ...`.
std::vector<std::string> Normalize(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0][0] != '-' &&
      std::none_of(std::begin(kSubcommands), std::end(kSubcommands), [&](const char* s) { return args[0] == s; }))
    args.insert(args.begin(), "run");
  return args;
}

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app{"runx: declarative experiment runner for deep-learning performance work"};
  app.set_version_flag("--version", fmt::format("runx {} (git {}{})", Version(), GitSha(), GitDirty() == 1 ? ", uncommitted changes" : ""));
  app.require_subcommand(1);

  RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "run an experiment file (also: runx FILE)");
  run_cmd->add_option("file", run.file, "experiment YAML file")->required();
  std::string db_run;
  run_cmd->add_option("--db", db_run, "results store (default: the experiment's `results`, results/runx.db)");
  run_cmd->add_option("--set", run.overrides, "override a config value, e.g. --set data.batch_size=128")->take_all();
  run_cmd->add_flag("-q,--quiet", run.quiet, "print only errors");
  run_cmd->add_flag("--json", run.json, "machine-readable events on stdout, one JSON object a line");
  run_cmd->add_flag("--force", run.force, "re-run every trial: reuse no result recorded before this run");
  run_cmd->add_flag("--resume", run.resume,
                    "continue the latest interrupted run of this plan (its --force included) instead of starting a new run");
  run_cmd->add_flag("--any-build", run.any_build,
                    "reuse ok results recorded by other runx builds (same config, LibTorch, CUDA, cuDNN, device)");
  run_cmd->add_flag("--strict", run.strict, "exit 1 when any trial is not ok");
  std::string shard;
  run_cmd->add_option("--shard", shard, "run only trials i, i+n, i+2n, ... of the plan (i/n, 0-based)");
  run_cmd->add_flag("--in-process", run.in_process, "run trials in this process (debugging: no crash isolation)");
  run_cmd->add_option("--devices", run.devices,
                      "run trials in parallel, one per device, each pinned to its device: cuda:0,cuda:1,... or all "
                      "(every GPU); cpu (repeatable) and mps also count");
  run_cmd->add_option("--export-markdown", run.export_markdown, "also write the end-of-run table to FILE as markdown");
  run_cmd->add_option("--export-csv", run.export_csv, "also write the end-of-run table to FILE as CSV");
  run_cmd->add_option("--export-json", run.export_json, "also write the end-of-run table to FILE as JSON");
  run_cmd->add_option("--tag", run.tag, "name this run (runx compare and history accept the tag, e.g. before-fix)");
  run_cmd->add_option("--note", run.note, "a note kept with the run (runx history and report show it)");
  run_cmd->add_option("--sweep-id", run.sweep_id,
                      "runs given the same ID are one sweep wherever they ran (shards on several machines; runx "
                      "submit sets it)");

  std::string plan_file, plan_shard;
  std::vector<std::string> plan_sets;
  auto* plan_cmd = app.add_subcommand("plan", "print the trial matrix of an experiment; nothing runs");
  plan_cmd->add_option("file", plan_file, "experiment YAML file")->required();
  plan_cmd->add_option("--set", plan_sets, "override a config value")->take_all();
  plan_cmd->add_option("--shard", plan_shard, "show only this shard (i/n)");

  engine::TrialChildArgs trial;
  auto* trial_cmd = app.add_subcommand("trial", "");  // internal: one trial (or one rank of one) in a child process
  trial_cmd->add_option("--config", trial.config_path)->required();
  trial_cmd->add_option("--out", trial.out_path)->required();
  trial_cmd->add_option("--progress", trial.progress_path);
  trial_cmd->add_option("--parent", trial.parent_pid);
  trial_cmd->add_option("--rank", trial.rank);
  trial_cmd->add_option("--world-size", trial.world_size);
  trial_cmd->add_option("--rendezvous", trial.rendezvous);
  trial_cmd->add_flag("--ranks-from-env", trial.ranks_from_env);
  trial_cmd->group("");

  CompileArgs compile;
  std::string compile_db;
  auto* compile_cmd = app.add_subcommand(
      "compile", "make the compiled training steps (compiled_step, package: auto) an experiment needs, beside the store");
  compile_cmd->add_option("file", compile.file, "experiment YAML file")->required();
  compile_cmd->add_option("--db", compile_db, "results store the packages go beside (default: the experiment's `results`)");
  compile_cmd->add_option("--set", compile.overrides, "override a config value, as for run")->take_all();
  compile_cmd->add_option("--python", compile.python, "the Python with PyTorch (CUDA) that runs bench/compile_step.py")
      ->capture_default_str();
  compile_cmd->add_flag("--dry-run", compile.dry_run, "list the packages, which are missing and the commands; make nothing");

  std::vector<std::string> files, validate_sets;
  auto* validate_cmd = app.add_subcommand("validate", "check experiment files against the schema; nothing runs");
  validate_cmd->add_option("files", files, "experiment YAML files")->required();
  validate_cmd->add_option("--set", validate_sets, "override, checked like the file")->take_all();

  std::string sql, db_query = "results/runx.db", format = "table";
  auto* query_cmd = app.add_subcommand("query", "run a read-only SQL query on the results store");
  query_cmd->add_option("sql", sql, "SQL, e.g. 'SELECT * FROM trial_summary'")->required();
  query_cmd->add_option("--db", db_query, "results store")->capture_default_str();
  query_cmd->add_option("--format", format, "table | csv | json")
      ->check(CLI::IsMember({"table", "csv", "json"}))->capture_default_str();

  std::string merge_out;
  std::vector<std::string> merge_inputs;
  store::MergeOptions merge_options;
  auto* merge_cmd = app.add_subcommand(
      "merge", "add the runs and trials of other results stores (other machines, shards) to one store");
  merge_cmd->add_option("out", merge_out, "the store to merge into (created if missing)")->required();
  merge_cmd->add_option("inputs", merge_inputs, "the stores to merge; only read")->required();
  merge_cmd->add_flag("--allow-running", merge_options.allow_running,
                      "merge runs that are still running as they are now (a later merge brings the rest)");
  merge_cmd->add_flag("--runners-ended", merge_options.runners_ended,
                      "every runner of the inputs has ended (e.g. a finished job array): merge a run still marked "
                      "running as interrupted");
  SubmitArgs submit;
  std::string submit_db, submit_status;
  auto* submit_cmd = app.add_subcommand(
      "submit",
      "run an experiment's trials as a SLURM job array, one task per shard, merged into the store at the end");
  submit_cmd->add_option("file", submit.file, "experiment YAML file");
  submit_cmd->add_flag("--slurm", submit.slurm, "submit to SLURM with sbatch (the only scheduler)");
  submit_cmd->add_option("--partition", submit.partition, "the partition of both jobs (default: the cluster's)");
  submit_cmd->add_option("--gpus-per-trial", submit.gpus_per_trial, "GPUs of each array task (--gres=gpu:N); 0: none")
      ->capture_default_str();
  submit_cmd->add_option("--cpus-per-task", submit.cpus_per_task, "CPUs of each array task (default: the partition's)");
  submit_cmd->add_option("--time", submit.time,
                         "time limit of each array task, e.g. 2:00:00 (default: the partition's)");
  submit_cmd->add_option("--max-parallel", submit.max_parallel, "array tasks running at once (default: no limit)");
  submit_cmd->add_option("--shards", submit.shards,
                         "array tasks, each running trials i, i+n, ... (default: one per trial)");
  submit_cmd->add_option("--db", submit_db,
                         "the results store the shards are merged into (default: the experiment's `results`)");
  submit_cmd->add_option("--set", submit.overrides, "override a config value, as for runx run")->take_all();
  submit_cmd->add_option("--sbatch", submit.sbatch_options,
                         "another sbatch option for both jobs, e.g. --sbatch=--account=proj (repeatable)")
      ->allow_extra_args(false);
  submit_cmd->add_option("--setup", submit.setup,
                         "a shell line both jobs run before runx, e.g. --setup 'module load cuda' (repeatable)")
      ->allow_extra_args(false);
  submit_cmd->add_flag("--no-reuse", submit.no_reuse,
                       "start each shard store empty instead of from a copy of the results store (nothing is reused)");
  submit_cmd->add_flag("--force", submit.force, "runx run --force in every shard: reuse nothing");
  submit_cmd->add_flag("--any-build", submit.any_build, "runx run --any-build in every shard");
  submit_cmd->add_flag("--dry-run", submit.dry_run, "print the scripts and the sbatch commands; submit nothing");
  submit_cmd->add_flag("--wait", submit.wait, "wait until the merge job has ended, then show the status");
  submit_cmd->add_option("--status", submit_status,
                         "show what the jobs of a submission did: its folder (default: the newest beside the store)")
      ->expected(0, 1);

  CompareArgs compare;
  auto* compare_cmd = app.add_subcommand(
      "compare", "compare two runs (or RUN:LABEL variants): throughput ratio B/A, 95% interval, verdict per variant");
  compare_cmd->add_option("A", compare.a,
                          "run id, latest, previous, a tag, or a git revision (yours or runx's); RUN:LABEL for one "
                          "variant")
      ->required();
  compare_cmd->add_option("B", compare.b, "the same, compared against A")->required();
  compare_cmd->add_option("--db", compare.db, "results store")->capture_default_str();
  compare_cmd->add_option("--threshold", compare.threshold, "changes within +-this are no change, e.g. 2% or 0.02")
      ->capture_default_str();
  compare_cmd->add_flag("--fail-on-regression", compare.fail_on_regression,
                        "exit 1 when a variant is slower beyond the threshold (a CI gate)");
  compare_cmd->add_flag("--fail-on-inconclusive", compare.fail_on_inconclusive,
                        "the gate also fails when the evidence cannot judge a variant (implies --fail-on-regression)");
  compare_cmd->add_option("--format", compare.format, "table | csv | json | markdown")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown"}))->capture_default_str();
  compare_cmd->add_option("--experiment", compare.experiment,
                          "look for latest, previous and git revisions among this experiment's runs");

  HistoryArgs history;
  std::string history_db;
  auto* history_cmd = app.add_subcommand("history", "the runs of an experiment, newest first, with changes per variant");
  history_cmd->add_option("experiment", history.experiment,
                          "experiment name or file (default: the experiment of the newest run)");
  history_cmd->add_option("--db", history_db, "results store (default: the file's `results`, results/runx.db)");
  history_cmd->add_option("--format", history.format, "table | csv | json | markdown")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown"}))->capture_default_str();
  history_cmd->add_option("--limit", history.limit, "show the newest N runs (0: all)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  history_cmd->add_option("--threshold", history.threshold, "changes within +-this are no change")
      ->capture_default_str();

  ReportArgs report_args;
  auto* report_cmd = app.add_subcommand(
      "report", "write one self-contained HTML file with the charts of runs, their history and environment");
  report_cmd->add_option("runs", report_args.runs, "run ids, latest, previous or git revisions (default: latest)");
  report_cmd->add_option("-o,--output", report_args.out, "the HTML file to write, e.g. report.html")->required();
  report_cmd->add_option("--db,--store", report_args.db, "results store")->capture_default_str();
  report_cmd->add_option("--threshold", report_args.threshold, "the history's changes within +-this are no change")
      ->capture_default_str();
  report_cmd->add_option("--history", report_args.history, "runs of the experiment's history shown (0: all)")
      ->capture_default_str();
  report_cmd->add_option("--experiment", report_args.experiment,
                         "look for latest, previous and git revisions among this experiment's runs");

  auto* doctor_cmd = app.add_subcommand("doctor", "LibTorch build, devices, what device: auto picks");
  auto* plugins_cmd = app.add_subcommand("plugins", "list the technique plugins found");

  data::PackRequest pack;
  auto* data_cmd = app.add_subcommand("data", "data set tools: 'runx data pack'");
  data_cmd->require_subcommand(1);
  auto* pack_cmd = data_cmd->add_subcommand(
      "pack", "write an experiment's data (fashion-mnist, synthetic) as .npy files for 'source: memmap'");
  pack_cmd->add_option("experiment", pack.experiment, "experiment YAML file whose data section is packed");
  pack_cmd->add_option("--out", pack.out, "folder to write the .npy files into (created)")->required();
  pack_cmd->add_option("--source", pack.source, "pack this source without an experiment file")
      ->check(CLI::IsMember({"fashion-mnist", "synthetic"}));
  pack_cmd->add_option("--path", pack.path, "fashion-mnist: the folder of its IDX files");
  pack_cmd->add_option("--train-limit", pack.train_limit, "pack only the first N training samples")
      ->check(CLI::PositiveNumber);
  pack_cmd->add_option("--count", pack.count, "synthetic: the number of samples to write")->check(CLI::PositiveNumber);
  pack_cmd->add_option("--set", pack.sets, "override a config value of the experiment")->take_all();

  const auto args = Normalize(argc, argv);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes args reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*run_cmd) {
    if (!db_run.empty()) run.db = db_run;
    if (!shard.empty()) run.shard = shard;
    run.command_line = "runx";
    for (const auto& a : args) run.command_line += " " + a;
    return Run(run);
  }
  if (*validate_cmd) return Validate(files, validate_sets);
  if (*compile_cmd) {
    if (!compile_db.empty()) compile.db = compile_db;
    return Compile(compile);
  }
  if (*plan_cmd) return Plan(plan_file, plan_sets, plan_shard.empty() ? std::nullopt : std::optional(plan_shard));
  if (*trial_cmd) return engine::TrialChildMain(trial);
  if (*query_cmd) return Query(db_query, sql, format);
  if (*merge_cmd) return Merge(merge_out, merge_inputs, merge_options);
  if (*submit_cmd) {
    if (!submit_db.empty()) submit.db = submit_db;
    if (submit_cmd->count("--status") > 0) submit.status = submit_status;
    return Submit(submit);
  }
  if (*compare_cmd) return Compare(compare);
  if (*history_cmd) {
    if (!history_db.empty()) history.db = history_db;
    return History(history);
  }
  if (*report_cmd) return Report(report_args);
  if (*doctor_cmd) return Doctor();
  if (*plugins_cmd) return Plugins();
  if (*pack_cmd) return DataPack(pack);
  return 2;
}

}  // namespace runx::cli
