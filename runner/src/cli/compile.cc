// runx compile FILE.yaml: makes what the experiment's trials need from Python, in the folder beside
// the results store, by running tools/compile_step.py for each one that is missing (or, with
// --dry-run, says which and how): the TorchScript file of each python model (model: {name:
// python}), which its trials train, and the compiled training steps of compiled_step trials with
// `package: auto`.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/file_pair.h"
#include "base/files.h"
#include "base/process.h"
#include "base/remove_tree.h"
#include "base/text.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/step_check_text.h"
#include "plugins/dirs.h"
#include "runx/torch_release.h"
#include "spec/compiled_package.h"
#include "spec/python_model.h"
#include "version.h"
#include "worker/doctor.h"
#include "worker/step_check.h"

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
/// (worker/step_check.h); prints the runs and the figures. True when it trains alike.
bool CheckPackage(const Needed& n, const std::string& partial, const spec::SchemaSet& schemas,
                  const std::string& compiled_dir) {
  // The check's trials are experiments of their own: a python model's TorchScript file is named
  // again by their sweep from compiled_dir (the same key), not written into the file as `artifact`.
  nlohmann::json config = n.config;
  if (spec::IsPythonModel(config) && config["model"].is_object()) config["model"].erase("artifact");
  nlohmann::json candidate = config;
  spec::SetPackage(&candidate, fs::absolute(partial).string());
  nlohmann::json without = config;
  without["optimizations"].erase("compiled_step");
  engine::StepCheckOptions options;
  options.steps = kCheckSteps;
  options.compiled_dir = compiled_dir;
  options.work_dir = (fs::path(partial).parent_path() / fmt::format(".check-{}", getpid())).string();
  fmt::print(
      "compile: checking the package by training {} steps with it through runx (trial {}) against the step "
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
  base::RemoveTree(options.work_dir);
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

/// tools/compile_step.py of the source tree, or of the prefix runx is installed in (P/share/runx/tools:
/// version.h DataDir), under `python`, with `args`, then `tail` (its output option).
std::vector<std::string> CompileStep(const std::string& python, const std::vector<std::string>& args,
                                     std::initializer_list<std::string> tail) {
  std::vector<std::string> argv{python, ToolPath("compile_step.py")};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), tail);
  return argv;
}

void PrintCommand(const std::vector<std::string>& argv) {
  fmt::print("compile: {}\n", spec::ShellWords(argv));
  std::fflush(stdout);
}

/// Prints why `r` has no pair made (the outcomes every pair shares); true when it has one.
bool Reported(const base::FilePairResult& r, const std::string& python, const std::string& path, const char* what) {
  using Outcome = base::FilePairResult::Outcome;
  switch (r.outcome) {
    case Outcome::kMadeMeanwhile:
      fmt::print("compile: {} was made meanwhile by another runx compile\n", path);
      return true;
    case Outcome::kMade:
      return true;
    case Outcome::kCannotRun:
      fmt::print(stderr, "runx: error: cannot run '{}': {}\n", python, r.error);
      return false;
    case Outcome::kNoOutput:
      fmt::print(stderr, "runx: error: compile_step.py ended well but wrote no {} ({} and sidecar)\n", r.partial, what);
      return false;
    case Outcome::kCannotMove:
      fmt::print(stderr, "runx: error: cannot move the {} to {}: {}\n", what, path, r.error);
      return false;
    case Outcome::kFailed:
    case Outcome::kRejected:
      return false;  // the callers' own messages
  }
  return false;
}

/// Makes `p` with compile_step.py under `python` (base/file_pair.h: a partial pair, moved into
/// place whole), only once it has passed its check (CheckPackage). True when it is there afterwards.
bool Make(const Needed& n, const std::string& python, const spec::SchemaSet& schemas, const std::string& compiled_dir) {
  const spec::CompiledPackage& p = n.package;
  // Where this runx can load no package (LibTorch before 2.6, warned about above), nothing could
  // check it here, and nothing here could run it either: it is kept unchecked, and checked where
  // it is made by a runx that can.
  const auto check = [&](const std::string& partial) {
    if (!engine::HasAotInductor()) {
      fmt::print(stderr, "runx: warning: {} was not checked by training it: this runx cannot load it\n", p.path);
      return true;
    }
    return CheckPackage(n, partial, schemas, compiled_dir);
  };
  // This process's stdout and stderr: the compile prints its progress for minutes.
  const auto r =
      base::MakeFilePair({p.path, CompileStep(python, p.args, {"--measure", "0", "-o"}), false}, PrintCommand, check);
  if (r.outcome == base::FilePairResult::Outcome::kFailed)
    fmt::print(stderr, "runx: error: compile_step.py ended with status {} for {}; nothing was kept\n", r.status,
               p.path);
  if (!Reported(r, python, p.path, "package")) return false;
  if (r.outcome == base::FilePairResult::Outcome::kMade)
    fmt::print("compile: made {} ({:.1f} MiB)\n", p.path, static_cast<double>(fs::file_size(p.path)) / (1 << 20));
  return true;
}

/// Makes the TorchScript file `a` with compile_step.py --torchscript under `python`, as a pair
/// with its sidecar (base/file_pair.h). True when it is there afterwards; a builder that is neither
/// scriptable nor traceable is an error with PyTorch's reason.
bool MakeArtifact(const spec::PythonArtifact& a, const std::string& python) {
  const auto r =
      base::MakeFilePair({a.path, CompileStep(python, a.args, {"--torchscript"}), true}, PrintCommand, nullptr);
  if (r.outcome == base::FilePairResult::Outcome::kFailed) {
    std::string reason = r.err;
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
    if (r.status == 2)
      fmt::print(stderr, "runx: error: {} cannot be made into TorchScript: {}\n", a.source, reason);
    else
      fmt::print(stderr, "runx: error: compile_step.py ended with status {} for {}; nothing was kept:\n{}\n", r.status,
                 a.path, reason);
  }
  if (!Reported(r, python, a.path, "TorchScript file")) return false;
  if (r.outcome != base::FilePairResult::Outcome::kMade) return true;
  // How compile_step.py made it: torch.jit.script, or torch.jit.trace where scripting failed.
  std::string method = "?";
  if (const auto sidecar = base::ReadFile(a.path + ".json")) {
    const auto facts = nlohmann::json::parse(*sidecar, nullptr, /*allow_exceptions=*/false);
    if (facts.is_object() && facts.contains("method") && facts["method"].is_string())
      method = facts["method"] == "trace" ? "traced; torch.jit.script: " + facts.value("script_error", std::string())
                                          : "scripted";
  }
  fmt::print("compile: made {} ({})\n", a.path, method);
  return true;
}

/// `python`'s torch version, asked once however many kinds of file runx compile makes with it.
class PythonTorch {
 public:
  explicit PythonTorch(std::string python) : python_(std::move(python)) {}
  const base::ProcessResult& Probe() {
    if (!probe_) probe_ = base::RunProcess({python_, "-c", "import torch; print(torch.__version__)"});
    return *probe_;
  }

 private:
  std::string python_;
  std::optional<base::ProcessResult> probe_;
};

/// Makes the missing TorchScript files of python models; false when one could not be made.
bool MakeArtifacts(const std::map<std::string, std::pair<spec::PythonArtifact, std::vector<std::string>>>& artifacts,
                   const std::string& python, PythonTorch& torch, const std::string& release) {
  const auto& probe = torch.Probe();
  if (!probe.started || probe.status != 0) {
    fmt::print(stderr,
               "runx: error: '{}' cannot import torch ({}); compile_step.py makes a python model's TorchScript file "
               "with PyTorch (--python names another interpreter)\n",
               python, probe.started ? base::FirstLine(probe.err) : probe.error);
    return false;
  }
  const std::string python_torch = base::FirstLine(probe.out);
  if (TorchRelease(python_torch) != release)
    fmt::print(stderr,
               "runx: warning: '{}' has torch {}, runx's LibTorch is {}: a TorchScript file saved by a newer "
               "release may not load in an older one\n",
               python, python_torch, release);
  bool ok = true;
  for (const auto& [path, entry] : artifacts) {
    if (!spec::ArtifactPresent(path)) ok = MakeArtifact(entry.first, python) && ok;
  }
  return ok;
}

}  // namespace

int Compile(const CompileArgs& args) {
  const auto schemas = spec::SchemaSet::Load(plugins::PluginDirs());
  const auto loaded = LoadPlan(args.file, args.overrides, std::nullopt, schemas);
  if (!loaded) return 2;
  const std::string db = args.db.value_or(loaded->experiment.config.value("results", "results/runx.db"));
  const std::string dir = CompiledDir(db);
  const std::string release = engine::LibTorchRelease();
  PythonTorch python_torch_probe(args.python);

  std::map<std::string, Needed> needed;                                                        // by path
  std::map<std::string, std::pair<spec::PythonArtifact, std::vector<std::string>>> artifacts;  // by path: trials
  std::vector<std::pair<std::string, std::string>> refused;                                    // (trial, reason)
  size_t trials = 0, python_trials = 0;
  for (const auto& t : loaded->plan.trials) {
    if (t.repeat_index != 0) continue;
    std::string artifact;  // the python model's TorchScript file, where the trial has one
    if (spec::IsPythonModel(t.config)) {
      ++python_trials;
      auto a = spec::PythonModelArtifact(t.config, dir, release);
      if (!a.reason.empty()) {
        refused.emplace_back(t.label, a.reason);
      } else {
        artifact = a.path;
        auto& entry = artifacts[a.path];
        entry.first = std::move(a);
        entry.second.push_back(t.label);
      }
    }
    if (!spec::WantsAutoPackage(t.config)) continue;
    ++trials;
    auto p = spec::AutoPackage(t.config, dir, release);
    if (!p.reason.empty()) {
      refused.emplace_back(t.label, p.reason);
      continue;
    }
    auto& n = needed[p.path];
    n.package = std::move(p);
    if (n.trials.empty()) {
      n.config = t.config.get();
      // The package is checked by training it beside the eager model: a python model's TorchScript file.
      if (!artifact.empty()) spec::SetArtifact(&n.config, artifact);
    }
    n.trials.push_back(t.label);
  }
  if (trials == 0 && python_trials == 0) {
    fmt::print(
        "compile: no trial of {} trains a python model or runs compiled_step with package: auto; nothing to "
        "make\n",
        args.file);
    return 0;
  }
  if (python_trials > 0) {
    size_t missing_artifacts = 0;
    fmt::print("compile: {} TorchScript file{} of python models for {} trial{} of {}, in {} (LibTorch {}):\n",
               artifacts.size(), artifacts.size() == 1 ? "" : "s", python_trials, python_trials == 1 ? "" : "s",
               args.file, dir, release);
    for (const auto& [path, entry] : artifacts) {
      const bool present = spec::ArtifactPresent(path);
      missing_artifacts += !present;
      fmt::print("  {:<8} {}\n           key {}, {}, for {}\n", present ? "present" : "missing", path, entry.first.key,
                 entry.first.source, fmt::join(entry.second, "; "));
      if (!present) fmt::print("           {}\n", spec::TorchScriptCommand(entry.first, ToolPath("compile_step.py")));
    }
    // The eager model comes first: without it no trial of the experiment runs, and the package's
    // check trains beside it.
    if (!args.dry_run && missing_artifacts > 0 && !MakeArtifacts(artifacts, args.python, python_torch_probe, release)) {
      for (const auto& [label, reason] : refused) fmt::print(stderr, "  cannot   {}: {}\n", label, reason);
      return 1;
    }
    if (trials == 0) {
      for (const auto& [label, reason] : refused) fmt::print(stderr, "  cannot   {}: {}\n", label, reason);
      return refused.empty() ? 0 : 1;
    }
  }
  size_t missing = 0;
  fmt::print("compile: {} package{} for {} trial{} of {}, in {} (LibTorch {}):\n", needed.size(),
             needed.size() == 1 ? "" : "s", trials, trials == 1 ? "" : "s", args.file, dir, release);
  for (const auto& [path, n] : needed) {
    const bool present = spec::PackagePresent(path);
    missing += !present;
    fmt::print("  {:<8} {}\n           key {}, for {}\n", present ? "present" : "missing", path, n.package.key,
               fmt::join(n.trials, "; "));
    if (!present) fmt::print("           {}\n", spec::CompileCommand(n.package, ToolPath("compile_step.py")));
  }
  for (const auto& [label, reason] : refused) fmt::print(stderr, "  cannot   {}: {}\n", label, reason);
  if (args.dry_run || missing == 0) return refused.empty() ? 0 : 1;
  // A runx without AOTInductor can load no package: say so first, and let compile_step.py answer for
  // the Python (it refuses a torch before 2.6).
  const std::string cannot_load =
      engine::HasAotInductor()
          ? ""
          : fmt::format(
                "this runx (LibTorch {}) cannot load AOTInductor packages: compiled_step needs LibTorch 2.6 "
                "or later, and its trials stay incompatible here",
                release);

  // The package must be compiled by the torch release that will load it.
  const auto& probe = python_torch_probe.Probe();
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
