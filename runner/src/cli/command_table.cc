// The command table (cli/command_table.h): each subcommand's arguments and handler, declared once.
#include "cli/command_table.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "base/spelling.h"
#include "cli/commands.h"
#include "version.h"

namespace runx::cli {
namespace {

/// A check that the value is one of `choices`, which says the choices and the closest one when
/// it is not. Its description ("{a,b,c}") is how ChoicesOf finds the choices again.
CLI::Validator OneOf(std::vector<std::string> choices) {
  const std::string description = fmt::format("{{{}}}", fmt::join(choices, ","));
  return CLI::Validator(
      [choices](std::string& value) -> std::string {
        if (std::find(choices.begin(), choices.end(), value) != choices.end()) return "";
        std::string message = fmt::format("'{}' is not one of {}", value, fmt::join(choices, ", "));
        const std::string guess = base::SuggestName(value, choices);
        if (!guess.empty()) message += fmt::format("; did you mean '{}'?", guess);
        return message;
      },
      description);
}

/// A check that the value is a whole number of at least `min` (CLI11's own range check prints
/// the double's whole range).
CLI::Validator WholeNumber(long long min) {
  return CLI::Validator(
      [min](std::string& value) -> std::string {
        size_t used = 0;
        long long n = 0;
        try {
          n = std::stoll(value, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != value.size() || n < min)
          return fmt::format("'{}' is not a whole number of at least {}", value, min);
        return "";
      },
      "");
}

const std::vector<std::string> kTableFormats = {"table", "csv", "json", "markdown"};

Handler DefineRun(CLI::App& cmd, const std::vector<std::string>& words) {
  struct Parsed {
    RunArgs run;
    std::string db, shard, format = "table";
  };
  auto p = std::make_shared<Parsed>();
  RunArgs& run = p->run;
  cmd.add_option("file", run.file, "experiment YAML file")->required();
  cmd.add_option("--db", p->db, "results store (default: the experiment's `results`, results/runx.db)");
  cmd.add_option("--set", run.overrides, "override a config value, e.g. --set data.batch_size=128")->take_all();
  cmd.add_flag("-q,--quiet", run.quiet, "print only errors");
  cmd.add_option("--format", p->format,
                 "table: the progress and the end-of-run table for people; json: events on stdout, one JSON "
                 "object a line")
      ->check(OneOf({"table", "json"}))
      ->capture_default_str();
  cmd.add_flag("--json", run.json, "the same as --format json");
  cmd.add_flag("--force", run.force, "re-run every trial: reuse no result recorded before this run");
  cmd.add_flag("--resume", run.resume,
               "continue the latest interrupted run of this plan (its --force included) instead of starting a new run");
  cmd.add_flag("--any-build", run.any_build,
               "reuse ok results recorded by other runx builds (same config, LibTorch, CUDA, cuDNN, device)");
  cmd.add_flag("--strict", run.strict, "exit 1 when any trial is not ok");
  cmd.add_option("--shard", p->shard, "run only trials i, i+n, i+2n, ... of the plan (i/n, 0-based)");
  cmd.add_flag("--in-process", run.in_process, "run trials in this process (debugging: no crash isolation)");
  cmd.add_option("--devices", run.devices,
                 "run trials in parallel, one per device, each pinned to its device: cuda:0,cuda:1,... or all "
                 "(every GPU); cpu (repeatable) and mps also count");
  cmd.add_option("--export-markdown", run.export_markdown, "also write the end-of-run table to FILE as markdown");
  cmd.add_option("--export-csv", run.export_csv, "also write the end-of-run table to FILE as CSV");
  cmd.add_option("--export-json", run.export_json, "also write the end-of-run table to FILE as JSON");
  cmd.add_option("--tag", run.tag, "name this run (runx compare and history accept the tag, e.g. before-fix)");
  cmd.add_option("--note", run.note, "a note kept with the run (runx history and report show it)");
  cmd.add_option("--sweep-id", run.sweep_id,
                 "runs given the same ID are one sweep wherever they ran (shards on several machines; runx "
                 "submit sets it)");
  return [p, &words] {
    RunArgs run = p->run;
    if (!p->db.empty()) run.db = p->db;
    if (!p->shard.empty()) run.shard = p->shard;
    if (p->format == "json") run.json = true;
    run.command_line = "runx";
    for (const auto& w : words) run.command_line += " " + w;
    return Run(run);
  };
}

Handler DefineValidate(CLI::App& cmd, const std::vector<std::string>&) {
  struct Parsed {
    std::vector<std::string> files, sets;
  };
  auto p = std::make_shared<Parsed>();
  cmd.add_option("files", p->files, "experiment YAML files")->required();
  cmd.add_option("--set", p->sets, "override, checked like the file")->take_all();
  return [p] { return Validate(p->files, p->sets); };
}

Handler DefinePlan(CLI::App& cmd, const std::vector<std::string>&) {
  struct Parsed {
    std::string file, shard;
    std::vector<std::string> sets;
  };
  auto p = std::make_shared<Parsed>();
  cmd.add_option("file", p->file, "experiment YAML file")->required();
  cmd.add_option("--set", p->sets, "override a config value")->take_all();
  cmd.add_option("--shard", p->shard, "show only this shard (i/n)");
  return [p] { return Plan(p->file, p->sets, p->shard.empty() ? std::nullopt : std::optional(p->shard)); };
}

Handler DefineQuery(CLI::App& cmd, const std::vector<std::string>&) {
  struct Parsed {
    std::string sql, db = "results/runx.db", format = "table";
  };
  auto p = std::make_shared<Parsed>();
  cmd.add_option("sql", p->sql, "SQL, e.g. 'SELECT * FROM trial_summary'")->required();
  cmd.add_option("--db", p->db, "results store")->capture_default_str();
  cmd.add_option("--format", p->format, "how rows are printed")->check(OneOf(kTableFormats))->capture_default_str();
  return [p] { return Query(p->db, p->sql, p->format); };
}

Handler DefineCompare(CLI::App& cmd, const std::vector<std::string>&) {
  auto p = std::make_shared<CompareArgs>();
  cmd.add_option("A", p->a,
                 "run id, latest, previous, a tag, or a git revision (yours or runx's); RUN:LABEL for one variant")
      ->required();
  cmd.add_option("B", p->b, "the same, compared against A")->required();
  cmd.add_option("--db", p->db, "results store")->capture_default_str();
  cmd.add_option("--threshold", p->threshold, "changes within +-this are no change, e.g. 2% or 0.02")
      ->capture_default_str();
  cmd.add_flag("--fail-on-regression", p->fail_on_regression,
               "exit 1 when a variant is slower beyond the threshold (a CI gate)");
  cmd.add_flag("--fail-on-inconclusive", p->fail_on_inconclusive,
               "the gate also fails when the evidence cannot judge a variant (implies --fail-on-regression)");
  cmd.add_option("--format", p->format, "how the comparison is printed")
      ->check(OneOf(kTableFormats))
      ->capture_default_str();
  cmd.add_option("--experiment", p->experiment,
                 "look for latest, previous and git revisions among this experiment's runs");
  return [p] { return Compare(*p); };
}

Handler DefineHistory(CLI::App& cmd, const std::vector<std::string>&) {
  struct Parsed {
    HistoryArgs history;
    std::string db;
  };
  auto p = std::make_shared<Parsed>();
  HistoryArgs& history = p->history;
  cmd.add_option("experiment", history.experiment,
                 "experiment name or file (default: the experiment of the newest run)");
  cmd.add_option("--db", p->db, "results store (default: the file's `results`, results/runx.db)");
  cmd.add_option("--format", history.format, "how the history is printed")
      ->check(OneOf(kTableFormats))
      ->capture_default_str();
  cmd.add_option("--limit", history.limit, "show the newest N runs (0: all)")
      ->check(WholeNumber(0))
      ->capture_default_str();
  cmd.add_option("--threshold", history.threshold, "changes within +-this are no change")->capture_default_str();
  return [p] {
    HistoryArgs args = p->history;
    if (!p->db.empty()) args.db = p->db;
    return History(args);
  };
}

Handler DefineReport(CLI::App& cmd, const std::vector<std::string>&) {
  auto p = std::make_shared<ReportArgs>();
  cmd.add_option("runs", p->runs, "run ids, latest, previous or git revisions (default: latest)");
  cmd.add_option("-o,--output", p->out, "the HTML file to write, e.g. report.html")->required();
  cmd.add_option("--db,--store", p->db, "results store")->capture_default_str();
  cmd.add_option("--threshold", p->threshold, "the history's changes within +-this are no change")
      ->capture_default_str();
  cmd.add_option("--history", p->history, "runs of the experiment's history shown (0: all)")->capture_default_str();
  cmd.add_option("--experiment", p->experiment,
                 "look for latest, previous and git revisions among this experiment's runs");
  return [p] { return Report(*p); };
}

Handler DefineMerge(CLI::App& cmd, const std::vector<std::string>&) {
  struct Parsed {
    std::string out;
    std::vector<std::string> inputs;
    store::MergeOptions options;
  };
  auto p = std::make_shared<Parsed>();
  cmd.add_option("out", p->out, "the store to merge into (created if missing)")->required();
  cmd.add_option("inputs", p->inputs, "the stores to merge; only read")->required();
  cmd.add_flag("--allow-running", p->options.allow_running,
               "merge runs that are still running as they are now (a later merge brings the rest)");
  cmd.add_flag("--runners-ended", p->options.runners_ended,
               "every runner of the inputs has ended (e.g. a finished job array): merge a run still marked "
               "running as interrupted");
  return [p] { return Merge(p->out, p->inputs, p->options); };
}

Handler DefineSubmit(CLI::App& cmd, const std::vector<std::string>&) {
  struct Parsed {
    SubmitArgs submit;
    std::string db, status;
  };
  auto p = std::make_shared<Parsed>();
  SubmitArgs& submit = p->submit;
  cmd.add_option("file", submit.file, "experiment YAML file");
  cmd.add_flag("--slurm", submit.slurm, "submit to SLURM with sbatch (the only scheduler)");
  cmd.add_option("--partition", submit.partition, "the partition of both jobs (default: the cluster's)");
  cmd.add_option("--gpus-per-trial", submit.gpus_per_trial, "GPUs of each array task (--gres=gpu:N); 0: none")
      ->capture_default_str();
  cmd.add_option("--cpus-per-task", submit.cpus_per_task, "CPUs of each array task (default: the partition's)");
  cmd.add_option("--time", submit.time, "time limit of each array task, e.g. 2:00:00 (default: the partition's)");
  cmd.add_option("--max-parallel", submit.max_parallel, "array tasks running at once (default: no limit)");
  cmd.add_option("--shards", submit.shards, "array tasks, each running trials i, i+n, ... (default: one per trial)");
  cmd.add_option("--db", p->db, "the results store the shards are merged into (default: the experiment's `results`)");
  cmd.add_option("--set", submit.overrides, "override a config value, as for runx run")->take_all();
  cmd.add_option("--sbatch", submit.sbatch_options,
                 "another sbatch option for both jobs, e.g. --sbatch=--account=proj (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--setup", submit.setup,
                 "a shell line both jobs run before runx, e.g. --setup 'module load cuda' (repeatable)")
      ->allow_extra_args(false);
  cmd.add_flag("--no-reuse", submit.no_reuse,
               "start each shard store empty instead of from a copy of the results store (nothing is reused)");
  cmd.add_flag("--force", submit.force, "runx run --force in every shard: reuse nothing");
  cmd.add_flag("--any-build", submit.any_build, "runx run --any-build in every shard");
  cmd.add_flag("--dry-run", submit.dry_run, "print the scripts and the sbatch commands; submit nothing");
  cmd.add_flag("--wait", submit.wait, "wait until the merge job has ended, then show the status");
  CLI::Option* status =
      cmd.add_option("--status", p->status,
                     "show what the jobs of a submission did: its folder (default: the newest beside the store)");
  status->expected(0, 1);
  return [p, status] {
    SubmitArgs args = p->submit;
    if (!p->db.empty()) args.db = p->db;
    if (status->count() > 0) args.status = p->status;
    return Submit(args);
  };
}

Handler DefineCompile(CLI::App& cmd, const std::vector<std::string>&) {
  struct Parsed {
    CompileArgs compile;
    std::string db;
  };
  auto p = std::make_shared<Parsed>();
  CompileArgs& compile = p->compile;
  cmd.add_option("file", compile.file, "experiment YAML file")->required();
  cmd.add_option("--db", p->db, "results store the packages go beside (default: the experiment's `results`)");
  cmd.add_option("--set", compile.overrides, "override a config value, as for run")->take_all();
  cmd.add_option("--python", compile.python, "the Python with PyTorch (CUDA) that runs tools/compile_step.py")
      ->capture_default_str();
  cmd.add_flag("--dry-run", compile.dry_run, "list the packages, which are missing and the commands; make nothing");
  return [p] {
    CompileArgs args = p->compile;
    if (!p->db.empty()) args.db = p->db;
    return Compile(args);
  };
}

Handler DefineVerify(CLI::App& cmd, const std::vector<std::string>&) {
  struct Parsed {
    VerifyArgs verify;
    std::string db;
  };
  auto p = std::make_shared<Parsed>();
  VerifyArgs& verify = p->verify;
  cmd.add_option("file", verify.file, "experiment YAML file")->required();
  cmd.add_option("--db", p->db,
                 "results store whose compiled packages package: auto names (default: the experiment's `results`)");
  cmd.add_option("--set", verify.overrides, "override a config value, as for run")->take_all();
  cmd.add_option("--steps", verify.steps, "training steps of each run")->check(WholeNumber(1))->capture_default_str();
  cmd.add_flag("--keep", verify.keep, "keep the runs' experiments, store and weights (the folder is printed)");
  return [p] {
    VerifyArgs args = p->verify;
    if (!p->db.empty()) args.db = p->db;
    return Verify(args);
  };
}

Handler DefineData(CLI::App& cmd, const std::vector<std::string>&) {
  auto p = std::make_shared<data::PackRequest>();
  cmd.require_subcommand(1);
  CLI::App* pack = cmd.add_subcommand(
      "pack", "write an experiment's data (fashion-mnist, synthetic) as .npy files for 'source: memmap'");
  pack->allow_extras();  // reported by runx, as for every command
  pack->add_option("experiment", p->experiment, "experiment YAML file whose data section is packed");
  pack->add_option("--out", p->out, "folder to write the .npy files into (created)")->required();
  pack->add_option("--source", p->source, "pack this source without an experiment file")
      ->check(OneOf({"fashion-mnist", "synthetic"}));
  pack->add_option("--path", p->path, "fashion-mnist: the folder of its IDX files");
  pack->add_option("--train-limit", p->train_limit, "pack only the first N training samples")->check(WholeNumber(1));
  pack->add_option("--count", p->count, "synthetic: the number of samples to write")->check(WholeNumber(1));
  pack->add_option("--set", p->sets, "override a config value of the experiment")->take_all();
  return [p] { return DataPack(*p); };
}

/// `--format table|json` and nothing else (doctor, plugins): `run` prints in the format chosen.
Handler DefineTableOrJson(CLI::App& cmd, int (*run)(const std::string& format)) {
  auto format = std::make_shared<std::string>("table");
  cmd.add_option("--format", *format, "table for people, json for tools")
      ->check(OneOf({"table", "json"}))
      ->capture_default_str();
  return [format, run] { return run(*format); };
}

Handler DefineDoctor(CLI::App& cmd, const std::vector<std::string>&) { return DefineTableOrJson(cmd, Doctor); }

Handler DefinePlugins(CLI::App& cmd, const std::vector<std::string>&) { return DefineTableOrJson(cmd, Plugins); }

Handler DefineCompletion(CLI::App& cmd, const std::vector<std::string>& words) {
  auto shell = std::make_shared<std::string>();
  cmd.add_option("shell", *shell, "the shell (bash)")->required()->check(OneOf({"bash"}));
  return [shell, &words] {  // `shell` lives as long as the parse that fills it
    const CommandLine line = MakeCommandLine(words);
    fmt::print("{}", BashCompletion(*line.app));
    return 0;
  };
}

Handler DefineMan(CLI::App&, const std::vector<std::string>& words) {
  return [&words] {
    const CommandLine line = MakeCommandLine(words);
    fmt::print("{}", ManPage(*line.app));
    return 0;
  };
}

// Internal: one trial (or one rank of one) in a child process; runx runs it, users do not.
Handler DefineTrial(CLI::App& cmd, const std::vector<std::string>&) {
  auto p = std::make_shared<engine::TrialChildArgs>();
  cmd.add_option("--config", p->config_path)->required();
  cmd.add_option("--out", p->out_path)->required();
  cmd.add_option("--progress", p->progress_path);
  cmd.add_option("--parent", p->parent_pid);
  cmd.add_option("--rank", p->rank);
  cmd.add_option("--world-size", p->world_size);
  cmd.add_option("--rendezvous", p->rendezvous);
  cmd.add_flag("--ranks-from-env", p->ranks_from_env);
  return [p] { return Trial(*p); };
}

// Internal: a sweep's trials identified and checked for runx (worker/prepare.h); runx runs it.
Handler DefinePrepare(CLI::App&, const std::vector<std::string>&) {
  return [] { return Prepare(); };
}

}  // namespace

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"run", "run an experiment file (also: runx FILE)", DefineRun},
      {"validate", "check experiment files against the schema; nothing runs", DefineValidate},
      {"plan", "print the trial matrix of an experiment; nothing runs", DefinePlan},
      {"query", "run a read-only SQL query on the results store", DefineQuery},
      {"compare", "compare two runs (or RUN:LABEL variants): throughput ratio B/A, 95% interval, verdict per variant",
       DefineCompare},
      {"history", "the runs of an experiment, newest first, with changes per variant", DefineHistory},
      {"report", "write one self-contained HTML file with the charts of runs, their history and environment",
       DefineReport},
      {"merge", "add the runs and trials of other results stores (other machines, shards) to one store", DefineMerge},
      {"submit",
       "run an experiment's trials as a SLURM job array, one task per shard, merged into the store at the end",
       DefineSubmit},
      {"compile",
       "make what an experiment needs from Python, beside the store: python models' TorchScript files and the compiled "
       "training steps (compiled_step, package: auto)",
       DefineCompile},
      {"verify",
       "train each variant's techniques a few steps against the fp32 step without them: the same training or not",
       DefineVerify},
      {"data", "data set tools: 'runx data pack'", DefineData},
      {"doctor", "LibTorch build, devices, what device: auto picks", DefineDoctor},
      {"plugins", "list the technique plugins found", DefinePlugins},
      {"completion", "print the shell completion script: runx completion bash", DefineCompletion},
      {"man", "print runx's manual page (roff): runx man | man -l -", DefineMan},
      {"trial", "", DefineTrial},
      {"prepare", "", DefinePrepare},
  };
  return commands;
}

CommandLine MakeCommandLine(const std::vector<std::string>& words) {
  CommandLine line;
  line.app =
      std::make_unique<CLI::App>("runx: declarative experiment runner for deep-learning performance work", "runx");
  CLI::App& app = *line.app;
  app.set_version_flag("--version", fmt::format("runx {} (git {}{})", Version(), GitSha(),
                                                GitDirty() == 1 ? ", uncommitted changes" : ""));
  app.require_subcommand(1);
  app.footer(
      "runx FILE.yaml [OPTIONS] is runx run FILE.yaml [OPTIONS].\n"
      "'runx COMMAND --help' shows a command's options; 'runx man' the whole manual.\n"
      "Exit status: 0 ok, 1 could not do it (a store or output failed, a refused query, a failed gate),\n"
      "2 invalid input (command line, config, reference, missing store), 70 a bug in runx, 130 interrupted.");
  for (const Command& command : Commands()) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    if (command.help.empty()) sub->group("");  // internal: not listed
    // Extra positionals are reported by runx (cli/app.cc), in the order they were given.
    sub->allow_extras();
    line.handlers.emplace_back(sub, command.define(*sub, words));
  }
  return line;
}

std::vector<std::string> ChoicesOf(const CLI::Option& option) {
  // OneOf's description, which CLI11 appends to the type name: "TEXT:{table,csv,json}".
  const std::string type = option.get_type_name();
  const size_t open = type.rfind(":{");
  if (open == std::string::npos || type.back() != '}') return {};
  std::vector<std::string> choices;
  const std::string list = type.substr(open + 2, type.size() - open - 3);
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    choices.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return choices;
}

std::vector<const CLI::App*> ListedCommands(const CLI::App& app) {
  std::vector<const CLI::App*> subs;
  for (const CLI::App* sub : app.get_subcommands({}))
    if (!sub->get_group().empty()) subs.push_back(sub);  // `trial` has no group
  return subs;
}

std::vector<std::string> ListedNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : ListedCommands(app)) names.push_back(sub->get_name());
  return names;
}

std::string CommandPath(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* parent = app.get_parent(); parent != nullptr; parent = parent->get_parent())
    path = parent->get_name() + " " + path;
  return path;
}

std::string UsageOf(const CLI::App& app) {
  CLI::Formatter formatter;
  std::string usage = formatter.make_usage(&app, CommandPath(app));
  const std::string prefix = "Usage: ";
  if (usage.compare(0, prefix.size(), prefix) == 0) usage.erase(0, prefix.size());
  while (!usage.empty() && usage.back() == '\n') usage.pop_back();
  return usage;
}

}  // namespace runx::cli
