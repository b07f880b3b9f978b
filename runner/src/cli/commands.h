#pragma once
// argv -> command -> exit status. Nothing else lives in cli/: each command (one file each) loads
// its input, calls the engine, spec, store or slurm, prints, and returns the exit status
// (cli/command_table.h: 0 ok, 1 could not run / a refused query / under --strict a trial not ok,
// 2 invalid input, 130 interrupted). Errors are printed as `runx: error: ...`. No LibTorch here.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data/pack.h"
#include "report/table.h"
#include "slurm/submit.h"
#include "store/merge.h"
#include "store/store.h"
#include "worker/child.h"

namespace runx::cli {

struct RunArgs {
  std::string file;
  std::vector<std::string> overrides;  ///< --set key=value, in order
  std::optional<std::string> db;       ///< --db PATH (else the experiment's `results`)
  std::optional<std::string> shard;    ///< --shard i/n
  bool quiet = false;
  bool json = false;        ///< machine-readable events on stdout
  bool force = false;       ///< reuse no result recorded before this run
  bool resume = false;      ///< continue the latest interrupted run of this plan
  bool any_build = false;   ///< reuse results of other runx builds
  bool strict = false;      ///< exit 1 when any trial is not ok
  bool in_process = false;  ///< run trials in this process (debugging; no crash isolation)
  std::string devices;      ///< --devices cuda:0,cuda:1 | all | cpu,cpu: one trial per device in parallel
  std::string command_line;
  /// --export-markdown / --export-csv / --export-json FILE: the end-of-run table written there.
  std::string export_markdown, export_csv, export_json;
  std::string sweep_id;  ///< --sweep-id: runs started with one id are one sweep wherever they ran
  std::string tag;       ///< --tag NAME
  std::string note;      ///< --note TEXT
};

struct CompileArgs {
  std::string file;
  std::vector<std::string> overrides;  ///< --set key=value, as for run
  std::optional<std::string> db;       ///< the results store the packages go beside
  std::string python = "python3";      ///< the interpreter that runs tools/compile_step.py
  bool dry_run = false;                ///< say what is missing and how to make it; make nothing
};

struct VerifyArgs {
  std::string file;
  std::vector<std::string> overrides;  ///< --set key=value, as for run
  std::optional<std::string> db;       ///< the results store whose compiled packages `package: auto` names
  int steps = 3;                       ///< training steps of each run
  bool keep = false;                   ///< keep the runs' folder (its path is printed)
};

struct CompareArgs {
  std::string a, b;  ///< run references, each optionally RUN:LABEL
  std::string db = "results/runx.db";
  std::string threshold = "2%";
  std::string format = "table";
  std::string experiment;  ///< where `latest` and git revisions look ("" = any experiment)
  bool fail_on_regression = false;
  bool fail_on_inconclusive = false;  ///< the gate also fails on a variant the evidence cannot judge
};

struct HistoryArgs {
  std::string experiment;  ///< a name or an experiment file; "" = that of the newest run
  std::optional<std::string> db;
  std::string format = "table";
  std::string threshold = "2%";
  int limit = 10;  ///< runs shown; 0 = all
};

struct ReportArgs {
  std::vector<std::string> runs;  ///< run references; empty: latest
  std::string out;                ///< -o FILE
  std::string db = "results/runx.db";
  std::string threshold = "2%";  ///< of the history's verdicts
  std::string experiment;        ///< where `latest` and git revisions look ("" = any experiment)
  int history = 20;              ///< runs of each experiment's history; 0 = all
};

/// What slurm::MakeSubmission takes (the file, --set, --db, the jobs' resources and the shards'
/// runx options), and how the command runs it.
struct SubmitArgs : slurm::SubmitRequest {
  bool slurm = false;  ///< the scheduler (the only one: SLURM)
  bool dry_run = false;
  bool wait = false;                  ///< wait until the merge job has ended, then show the status
  std::optional<std::string> status;  ///< --status [DIR]: "" = the newest submission
};

/// `runx submit FILE --slurm`: writes and submits a job array of shards and a merge job
/// (slurm/script.h); `runx submit --status [DIR]`: what they did. Exit 0 submitted (with --wait:
/// and every shard and the merge ended ok), 1 SLURM refused or a job did not end ok, 2 invalid
/// input.
int Submit(const SubmitArgs& args);
int SubmitStatus(const SubmitArgs& args);

/// `runx run FILE` (and `runx FILE`): one run of the experiment into the results store.
int Run(const RunArgs& args);
int Compile(const CompileArgs& args);
/// `runx verify FILE`: each variant that adds techniques to the baseline, trained a few steps
/// against the fp32 step without them (worker/step_check.h). Exit 0 all train alike, 1 one does
/// not (or cannot be told), 2 invalid input.
int Verify(const VerifyArgs& args);
/// `runx plan FILE`: the trial matrix; nothing runs.
int Plan(const std::string& file, const std::vector<std::string>& overrides, const std::optional<std::string>& shard);
/// `runx validate FILE...`: every problem of every file; exit 2 on any.
int Validate(const std::vector<std::string>& files, const std::vector<std::string>& overrides);
/// `runx query SQL`: read-only; exit 1 on a refused or failed statement, 2 without a store.
int Query(const std::string& db, const std::string& sql, const std::string& format);
/// `runx merge OUT IN...`: the runs and trials of the stores IN added to OUT (store/merge.h);
/// exit 2 when an input does not exist, 1 when it cannot merge (OUT is then unchanged).
int Merge(const std::string& out, const std::vector<std::string>& inputs, const store::MergeOptions& options);
/// `runx compare A B`: exit 1 under --fail-on-regression when a variant is slower beyond the
/// threshold (or the store cannot be read), 2 on invalid arguments or references.
int Compare(const CompareArgs& args);
/// `runx history [EXPERIMENT | FILE]`: the runs of an experiment, newest first.
int History(const HistoryArgs& args);
/// "no run of experiment 'X' in 'DB'" with the closest experiment name of the store, or its
/// experiments when none is close.
std::string NoRunOf(store::Store& store, const std::string& experiment);
/// `runx report [RUN...] -o FILE`: the HTML report of runs; exit 2 on invalid arguments or
/// references, 1 when the store, the chart library or FILE fails.
int Report(const ReportArgs& args);
/// The run ids `refs` name (store::ResolveRun), as compare and report read them: run ids,
/// `latest` and `previous` (among `experiment`'s runs when it is not empty) first, then git
/// revisions among the runs of `experiment`, or else of the experiment of the first run resolved.
/// Throws store::StoreError for a reference that names no run.
std::vector<int64_t> ResolveRuns(store::Store& store, const std::vector<std::string>& refs,
                                 const std::string& experiment);
/// "2%" -> 0.02, "0.02" -> 0.02; nullopt for anything else, or outside [0, 100%).
std::optional<double> ParseThreshold(const std::string& text);
/// The --threshold and --format of compare and history.
struct TableOptions {
  double threshold = 0.02;
  report::OutputFormat format = report::OutputFormat::kTable;
};
/// Both read; nullopt after saying on stderr which one is invalid (the command exits 2).
std::optional<TableOptions> ParseTableOptions(const std::string& threshold, const std::string& format);
/// Whether output in `format` is read on a terminal (table, markdown), so users' text in it is
/// printed with control characters escaped; CSV and JSON are for programs and stay exact.
inline bool ForTerminal(report::OutputFormat format) {
  return format == report::OutputFormat::kTable || format == report::OutputFormat::kMarkdown;
}
/// `runx doctor` and `runx plugins`; `format` is table (people) or json (tools: one object).
int Doctor(const std::string& format);
int Plugins(const std::string& format);
/// `runx data pack`: writes an experiment's data as .npy files and prints the YAML to read them.
int DataPack(const data::PackRequest& request);

/// The internal `trial`: one trial (or one rank of one) in a child process (worker/child.h).
int Trial(const engine::TrialChildArgs& args);
/// The internal `prepare`: a sweep's trials identified and checked (worker/prepare.h), from the
/// request on stdin to the answer, one JSON line, last on stdout.
int Prepare();
/// How the worker runs a trial in its own process (`run --in-process`); empty in runx.
std::function<store::TrialRecord(const nlohmann::json& config)> TrialsInThisProcess();
/// Replaces this process by the worker (sweep/child.h WorkerPath) with the same arguments;
/// returns an exit status only when that cannot be done.
int HandToWorker();

/// Entry point of runx and of its worker: both read the same command line (the command table).
/// The commands that need LibTorch (Compile, Verify, Doctor, Plugins, DataPack, Trial, Prepare,
/// TrialsInThisProcess) are defined twice: in the worker (runx-worker), where they run, and in cli/forward.cc for runx
/// itself, which links no LibTorch and hands them to the worker (docs/design.md, "Two binaries").
int Main(int argc, char** argv);

/// The arguments runx was started with (argv[1..]), as Main received them.
const std::vector<std::string>& ProcessArguments();

}  // namespace runx::cli
