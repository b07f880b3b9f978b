// runx verify FILE.yaml: does each variant's technique train like the step without it? For every
// variant that adds techniques to the baseline, a few steps with them against the fp32 step
// without them, from the same weights and batches, read against a floor (worker/step_check.h).
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/files.h"
#include "base/remove_tree.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/step_check_text.h"
#include "plugins/dirs.h"
#include "store/store.h"
#include "worker/step_check.h"

namespace runx::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// The config's techniques (a mapping: spec::NormaliseOptimizations made every list one).
std::vector<std::string> TechniqueNames(const json& config) {
  std::vector<std::string> out;
  const json techniques = config.value("optimizations", json::object());
  for (const auto& [name, _] : techniques.items()) out.push_back(name);
  return out;
}

/// A fresh folder under the temporary directory.
std::string MakeWorkDir() {
  std::string why;
  const auto dir = base::MakeTempDir("runx-verify-", &why);
  if (!dir) throw std::runtime_error(why);
  return *dir;
}

}  // namespace

int Verify(const VerifyArgs& args) {
  const auto schemas = spec::SchemaSet::Load(plugins::PluginDirs());
  const auto loaded = LoadPlan(args.file, args.overrides, std::nullopt, schemas);
  if (!loaded) return 2;
  if (args.steps < 1) {
    fmt::print(stderr, "runx: error: --steps must be at least 1\n");
    return 2;
  }
  const std::string db = args.db.value_or(loaded->experiment.config.value("results", "results/runx.db"));
  const spec::PlannedTrial* baseline = nullptr;
  for (const auto& t : loaded->plan.trials)
    if (t.is_baseline && t.repeat_index == 0) baseline = &t;
  if (!baseline || loaded->plan.trials.size() == 1) {
    fmt::print(
        "verify: {} has one variant: nothing to verify (runx verify checks each variant's techniques "
        "against the baseline of its sweep)\n",
        args.file);
    return 0;
  }
  const auto base_names = TechniqueNames(baseline->config);
  std::string work;
  try {
    work = MakeWorkDir();
  } catch (const std::runtime_error& e) {
    fmt::print(stderr, "runx: error: {}\n", e.what());
    return 1;
  }
  int checked = 0, failed = 0;
  for (const auto& t : loaded->plan.trials) {
    if (t.is_baseline || t.repeat_index != 0) continue;
    json without = t.config.get();
    std::vector<std::string> added;
    for (const auto& name : TechniqueNames(without))
      if (std::find(base_names.begin(), base_names.end(), name) == base_names.end()) added.push_back(name);
    if (added.empty()) {
      fmt::print("verify: {}: adds no technique to the baseline; nothing to check\n", t.label);
      continue;
    }
    for (const auto& name : added) without["optimizations"].erase(name);
    fmt::print("verify: {}: {} steps with {} against the fp32 step without, from the same weights and batches\n",
               t.label, args.steps, fmt::join(added, "+"));
    std::fflush(stdout);
    engine::StepCheckOptions options;
    options.steps = args.steps;
    options.work_dir = (fs::path(work) / std::to_string(t.variant_index)).string();
    options.compiled_dir = CompiledDir(db);
    engine::StepCheckResult result;
    try {
      result = engine::CheckStep(t.config.get(), without, schemas, options);
    } catch (const spec::SpecError& e) {
      fmt::print(stderr, "{}", e.Render());
      return 2;
    } catch (const std::invalid_argument& e) {
      fmt::print(stderr, "runx: error: {}: {}\n", t.label, e.what());
      return 2;
    } catch (const store::StoreError& e) {
      fmt::print(stderr, "runx: error: the check's results store in {}: {}\n", options.work_dir, e.what());
      return 1;
    }
    fmt::print("{}", FormatStepCheck(result, args.steps, "  "));
    ++checked;
    failed += !result.verdict.ok;
  }
  if (args.keep) {
    fmt::print("verify: the runs' experiments, store and weights are in {}\n", work);
  } else {
    base::RemoveTree(work);
  }
  if (checked > 0)
    fmt::print("verify: {} of {} variant{} train like the step without their techniques\n", checked - failed, checked,
               checked == 1 ? "" : "s");
  return failed ? 1 : 0;
}

}  // namespace runx::cli
