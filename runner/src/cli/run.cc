#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/terminal.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/observers.h"
#include "cli/user_repo.h"
#include "machine/energy.h"
#include "plugins/dirs.h"
#include "report/report.h"
#include "store/history.h"
#include "store/store.h"
#include "sweep/sweep.h"

namespace runx::cli {
namespace {

std::atomic<bool> g_interrupted{false};

void OnSignal(int) { g_interrupted = true; }

/// SIGINT, SIGTERM and SIGHUP (a closed terminal) set a flag: the running trial is ended, its
/// claim released, the run marked interrupted, and runx exits 130.
class SignalGuard {
 public:
  SignalGuard() {
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~SignalGuard() {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3]{};
};

/// Writes the end-of-run table to the files of --export-*; false (and a message) when one cannot
/// be written.
bool ExportTables(const RunArgs& args, const std::vector<report::VariantRow>& rows,
                  const report::ReportContext& context) {
  const std::pair<const std::string*, report::OutputFormat> exports[] = {
      {&args.export_markdown, report::OutputFormat::kMarkdown},
      {&args.export_csv, report::OutputFormat::kCsv},
      {&args.export_json, report::OutputFormat::kJson}};
  bool ok = true;
  for (const auto& [path, format] : exports) {
    if (path->empty()) continue;
    std::ofstream out(*path, std::ios::binary | std::ios::trunc);
    out << report::ExportReport(rows, format, context);
    out.close();
    if (!out) {
      fmt::print(stderr, "runx: error: cannot write the report to '{}': {}\n", *path, std::strerror(errno));
      ok = false;
    }
  }
  return ok;
}

}  // namespace

int Run(const RunArgs& args) {
  // The energy meter's switch, refused here when each trial would misread it (machine/energy.h).
  if (const auto energy = engine::ReadEnergySwitch(); !energy.error.empty()) {
    fmt::print(stderr, "runx: error: {}\n", energy.error);
    return 2;
  }
  // runx loads no LibTorch to run a trial in its own process: its worker runs the whole command.
  if (args.in_process && !TrialsInThisProcess()) return HandToWorker();
  const auto schemas = spec::SchemaSet::Load(plugins::PluginDirs());
  const auto loaded = LoadPlan(args.file, args.overrides, args.shard, schemas);
  if (!loaded) return 2;
  const spec::Experiment& exp = loaded->experiment;
  const std::string db = args.db.value_or(exp.config.value("results", "results/runx.db"));
  // Trials' files (exported models) go beside the results store unless RUNX_ARTIFACT_DIR says
  // otherwise; the children inherit the variable.
  if (!std::getenv("RUNX_ARTIFACT_DIR")) {
    const auto parent = std::filesystem::path(db).parent_path();
    setenv("RUNX_ARTIFACT_DIR", (parent.empty() ? std::filesystem::path("artifacts") : parent / "artifacts").c_str(),
           1);
  }
  engine::SweepOptions options;
  options.file = args.file;
  options.overrides = args.overrides;
  options.command_line = args.command_line;
  options.force = args.force;
  options.resume = args.resume;
  options.any_build = args.any_build;
  options.context.sweep_uid = args.sweep_id;
  options.context.tag = args.tag;
  options.context.note = args.note;
  const UserCommit commit = CommitOf(args.file);
  options.context.user_git_sha = commit.sha;
  options.context.user_git_dirty = commit.dirty;
  if (args.in_process) options.in_process = TrialsInThisProcess();
  options.compiled_dir = CompiledDir(db);
  options.interrupted = &g_interrupted;
  if (!args.devices.empty()) {
    if (args.in_process) {
      fmt::print(stderr,
                 "runx: error: --devices runs each trial in a child process pinned to its device; it cannot "
                 "be combined with --in-process\n");
      return 2;
    }
    try {
      options.devices = engine::DeviceSlotsHere(args.devices);
    } catch (const engine::DeviceSlotError& e) {
      fmt::print(stderr, "runx: error: {}\n", e.what());
      return 2;
    }
  }
  const std::string name = exp.config.value("name", "");
  ConsoleObserver console(name, args.file, args.quiet);
  JsonObserver json;
  engine::SweepObserver& observer = args.json ? static_cast<engine::SweepObserver&>(json) : console;
  try {
    options.plan_hash = engine::PlanHash(loaded->full);
    auto prepared = engine::PrepareSweep(loaded->plan, options);
    auto store = store::Store::Open(db);
    SignalGuard signals;
    g_interrupted = false;
    const auto result = engine::RunSweep(exp, loaded->plan, std::move(prepared), store, options, observer);
    const auto rows = report::Summarize(store, result.run_id);
    report::WriteVariantStats(store, result.run_id, rows);
    // A signal while the statistics were computed (bounded: well under a second, whatever the step
    // count) ends runx now: every trial is recorded, only the table is left unprinted.
    if (g_interrupted && !result.interrupted) {
      fmt::print(stderr,
                 "runx: interrupted after the last trial: every trial is recorded (run {}); runx history "
                 "and runx compare show them\n",
                 result.run_id);
      return 130;
    }
    if (args.json) {
      JsonObserver::Emit({{"event", "sweep_end"},
                          {"run_id", result.run_id},
                          {"sweep_id", result.run_id},
                          {"interrupted", result.interrupted},
                          {"done", result.done},
                          {"ran", result.ran},
                          {"reused", result.reused},
                          {"skipped", result.reused},
                          {"not_ok", result.not_ok}});
    } else if (!args.quiet) {
      fmt::print("{}", base::PrintableLines(report::RenderReport(rows)));
      fmt::print("{}", base::PrintableLines(report::RenderNoise(rows)));
      fmt::print("results: {} (run {}){}\n", db, result.run_id,
                 result.reused ? fmt::format("; {} trial{} reused from earlier runs", result.reused,
                                             result.reused == 1 ? "" : "s")
                               : "");
      // Once an experiment has runs to compare, say how.
      if (!name.empty() && store::ListRuns(store, name, 2).size() > 1) {
        const std::string at = db == "results/runx.db" ? "" : " --db " + db;
        fmt::print("compare: runx compare previous latest{}; history: runx history {}{}\n", at, name, at);
      }
    }
    const bool exported = ExportTables(args, rows, {result.run_id, name});
    if (result.interrupted) {
      fmt::print(stderr,
                 "runx: interrupted: {} of {} trials done; run the same command again to go on "
                 "(--resume continues this run)\n",
                 result.done, loaded->plan.trials.size());
      return 130;
    }
    if (!exported) return 1;
    return args.strict && result.not_ok > 0 ? 1 : 0;
  } catch (const store::StoreError& e) {
    fmt::print(stderr, "runx: error: {}\n", e.what());
    return 1;
  } catch (const engine::WorkerError& e) {
    fmt::print(stderr,
               "runx: error: {}\nthe trials are prepared and run by runx-worker, built and installed beside runx (set "
               "RUNX_WORKER to use another); nothing was run\n",
               base::Printable(e.what()));
    return 1;
  }
}

}  // namespace runx::cli
