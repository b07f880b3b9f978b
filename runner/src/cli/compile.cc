// runx compile FILE.yaml: makes the compiled training steps that the experiment's compiled_step
// trials with `package: auto` need, in the folder beside the results store, by running
// bench/compile_step.py for each one that is missing (or, with --dry-run, says which and how).
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/files.h"
#include "base/process.h"
#include "base/text.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/step_check_text.h"
#include "engine/step_check.h"
#include "engine/doctor.h"
#include "plugins/dirs.h"
#include "runx/torch_release.h"
#include "spec/compiled_package.h"
#include "version.h"

namespace runx::cli {
namespace {

namespace fs = std::filesystem;

struct Needed {
  spec::CompiledPackage package;
  std::vector<std::string> trials;  ///< labels of the trials that run it
  nlohmann::json config;            ///< the first of them: the package is checked by training it
};

constexpr int kCheckSteps = 3;

/// Trains the package at `partial` for kCheckSteps steps through runx's own loader (compiled_step)
/// against the step without it, in fp32 eager, from the same weights and batches
/// (engine/step_check.h); prints the runs and the figures. True when it trains alike.
bool CheckPackage(const Needed& n, const std::string& partial, const spec::SchemaSet& schemas,
                  const std::string& compiled_dir) {
  nlohmann::json candidate = n.config;
  candidate["optimizations"]["compiled_step"]["package"] = fs::absolute(partial).string();
  nlohmann::json without = n.config;
  without["optimizations"].erase("compiled_step");
  engine::StepCheckOptions options;
  options.steps = kCheckSteps;
  options.compiled_dir = compiled_dir;
  options.work_dir = (fs::path(partial).parent_path() / fmt::format(".check-{}", getpid())).string();
  fmt::print("compile: checking the package by training {} steps with it through runx (trial {}) against the step "
             "without it, from the same weights and batches\n",
             kCheckSteps, n.trials.front());
  std::fflush(stdout);
  engine::StepCheckResult result;
  std::string error;
  try {
    result = engine::CheckStep(candidate, without, schemas, options);
  } catch (const spec::SpecError& e) {
    error = e.Render();
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::error_code ec;
  fs::remove_all(options.work_dir, ec);
  if (!error.empty()) {
    fmt::print(stderr, "runx: error: the package's check could not run: {}\n", error);
    return false;
  }
  fmt::print("{}", FormatStepCheck(result, kCheckSteps, "  "));
  if (!result.verdict.ok)
    fmt::print(stderr, "runx: error: {} failed its check ({}), so it was not installed: {}\n", n.package.path,
               StepCheckWord(result.verdict), result.verdict.reason);
  return result.verdict.ok;
}

/// Makes `p` with compile_step.py under `python`: into a partial file beside it, then renamed into
/// place, the package before its sidecar (a trial looks for both), so that no runner ever sees half
/// a package, and only once it has passed its check (CheckPackage). True when it is there afterwards.
bool Make(const Needed& n, const std::string& python, const spec::SchemaSet& schemas, const std::string& compiled_dir) {
  const spec::CompiledPackage& p = n.package;
  std::error_code ec;
  fs::create_directories(fs::path(p.path).parent_path(), ec);
  base::FileLock lock(p.path + ".lock");  // two runx compile of one package take turns
  if (spec::PackagePresent(p.path)) {
    fmt::print("compile: {} was made meanwhile by another runx compile\n", p.path);
    return true;
  }
  const fs::path final_path(p.path);
  const std::string partial =
      (final_path.parent_path() / fmt::format(".partial-{}-{}", getpid(), final_path.filename().string())).string();
  // The source tree, or the prefix runx is installed in (P/share/runx/bench): version.h DataDir.
  std::vector<std::string> argv{python, (fs::path(DataDir()) / "bench" / "compile_step.py").string()};
  argv.insert(argv.end(), p.args.begin(), p.args.end());
  argv.insert(argv.end(), {"--measure", "0", "-o", partial});
  fmt::print("compile: {}\n", fmt::join(argv, " "));
  std::fflush(stdout);
  // This process's stdout and stderr: the compile prints its progress for minutes.
  std::string error;
  int status = -1;
  try {
    status = base::WaitForExit(base::Spawn(argv));
  } catch (const base::SpawnError& e) {
    error = std::strerror(e.error());
  }
  const auto discard = [&] {
    fs::remove(partial, ec);
    fs::remove(partial + ".json", ec);
  };
  if (status != 0) {
    discard();
    if (status < 0)
      fmt::print(stderr, "runx: error: cannot run '{}': {}\n", python, error);
    else
      fmt::print(stderr, "runx: error: compile_step.py ended with status {} for {}; nothing was kept\n", status,
                 p.path);
    return false;
  }
  if (!fs::exists(partial) || !fs::exists(partial + ".json")) {
    discard();
    fmt::print(stderr, "runx: error: compile_step.py ended well but wrote no {} (package and sidecar)\n", partial);
    return false;
  }
  if (!CheckPackage(n, partial, schemas, compiled_dir)) {
    discard();
    return false;
  }
  fs::rename(partial, p.path, ec);
  if (!ec) fs::rename(partial + ".json", p.path + ".json", ec);
  if (ec) {
    discard();
    fmt::print(stderr, "runx: error: cannot move the package to {}: {}\n", p.path, ec.message());
    return false;
  }
  fmt::print("compile: made {} ({:.1f} MiB)\n", p.path, static_cast<double>(fs::file_size(p.path)) / (1 << 20));
  return true;
}

}  // namespace

int Compile(const CompileArgs& args) {
  const auto schemas = spec::SchemaSet::Load(plugins::PluginDirs());
  const auto loaded = LoadPlan(args.file, args.overrides, std::nullopt, schemas);
  if (!loaded) return 2;
  const std::string db = args.db.value_or(loaded->experiment.config.value("results", "results/runx.db"));
  const std::string dir = CompiledDir(db);
  const std::string release = engine::LibTorchRelease();

  std::map<std::string, Needed> needed;  // by path
  std::vector<std::pair<std::string, std::string>> refused;  // (trial, reason)
  size_t trials = 0;
  for (const auto& t : loaded->plan.trials) {
    if (t.repeat_index != 0 || !spec::WantsAutoPackage(t.config)) continue;
    ++trials;
    auto p = spec::AutoPackage(t.config, dir, release);
    if (!p.reason.empty()) {
      refused.emplace_back(t.label, p.reason);
      continue;
    }
    auto& n = needed[p.path];
    n.package = std::move(p);
    if (n.trials.empty()) n.config = t.config.get();
    n.trials.push_back(t.label);
  }
  if (trials == 0) {
    fmt::print("compile: no trial of {} runs compiled_step with package: auto; nothing to make\n", args.file);
    return 0;
  }
  size_t missing = 0;
  fmt::print("compile: {} package{} for {} trial{} of {}, in {} (LibTorch {}):\n", needed.size(),
             needed.size() == 1 ? "" : "s", trials, trials == 1 ? "" : "s", args.file, dir, release);
  for (const auto& [path, n] : needed) {
    const bool present = spec::PackagePresent(path);
    missing += !present;
    fmt::print("  {:<8} {}\n           key {}, for {}\n", present ? "present" : "missing", path, n.package.key,
               fmt::join(n.trials, "; "));
    if (!present) fmt::print("           {}\n", spec::CompileCommand(n.package));
  }
  for (const auto& [label, reason] : refused) fmt::print(stderr, "  cannot   {}: {}\n", label, reason);
  if (args.dry_run || missing == 0) return refused.empty() ? 0 : 1;
  // A runx without AOTInductor can load no package: say so first, and let compile_step.py answer for
  // the Python (it refuses a torch before 2.6).
  const std::string cannot_load =
      engine::HasAotInductor()
          ? ""
          : fmt::format("this runx (LibTorch {}) cannot load AOTInductor packages: compiled_step needs LibTorch 2.6 "
                        "or later, and its trials stay incompatible here",
                        release);

  // The package must be compiled by the torch release that will load it.
  const auto probe = base::RunProcess({args.python, "-c", "import torch; print(torch.__version__)"});
  if (!probe.started || probe.status != 0) {
    fmt::print(stderr,
               "runx: error: '{}' cannot import torch ({}); compile_step.py needs PyTorch {} with CUDA, the release "
               "of runx's LibTorch (--python names another interpreter){}\n",
               args.python, probe.started ? base::FirstLine(probe.err) : probe.error, release,
               cannot_load.empty() ? "" : "; and " + cannot_load);
    return 1;
  }
  const std::string python_torch = base::FirstLine(probe.out);
  if (TorchRelease(python_torch) != release) {
    fmt::print(stderr,
               "runx: error: '{}' has torch {}, runx's LibTorch is {}: a package compiled by one release does not "
               "load in another (AOTInductor's ABI); use the Python of LibTorch {} (--python)\n",
               args.python, python_torch, release, release);
    return 1;
  }
  if (!cannot_load.empty()) fmt::print(stderr, "runx: warning: {}\n", cannot_load);
  bool ok = true;
  for (const auto& [path, n] : needed) {
    if (spec::PackagePresent(path)) continue;
    ok = Make(n, args.python, schemas, dir) && ok;
  }
  return ok && refused.empty() ? 0 : 1;
}

}  // namespace runx::cli
