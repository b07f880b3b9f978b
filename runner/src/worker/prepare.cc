#include "worker/prepare.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/time.h"
#include "plugins/loader.h"
#include "runx/compat.h"
#include "spec/compiled_package.h"
#include "spec/identity.h"
#include "spec/python_model.h"
#include "spec/spec.h"
#include "spec/trial_config.h"
#include "sweep/device_slots.h"
#include "sweep/sweep.h"
#include "trial/device.h"
#include "trial/environment.h"
#include "trial/setup.h"
#include "version.h"
#include "worker/identity.h"

namespace runx::engine {
namespace {

using base::UtcNow;

/// What Prepare is told of the sweep.
struct PrepareContext {
  std::string file;                 ///< the experiment file, as given (for the commands it names)
  std::string compiled_dir;         ///< where `package: auto` and python models' files are
  std::vector<DeviceSlot> devices;  ///< --devices, by name
};

/// What else keeps a compiled_step trial from running here, as a clause to append to the reason
/// it is refused for (no package, or none runx can name): a runx without AOTInductor, a device
/// other than CUDA. So that nobody makes a package this machine could not run anyway.
std::string AlsoInTheWay(const c10::Device& device) {
  if (!compat::kHasAotInductor)
    return fmt::format(
        "; this runx could not run it either: compiled_step needs LibTorch 2.6 or later (AOTInductor's "
        "package loader), and this runx is built against LibTorch {}",
        compat::TorchVersionString());
  if (!device.is_cuda()) return fmt::format("; and a package runs on CUDA only: this trial runs on {}", device.str());
  return "";
}

/// Why a trial whose `package: auto` names a file not made yet is refused: the command that makes
/// it, and what else stands in the way here.
std::string MissingPackage(const spec::CompiledPackage& package, const c10::Device& device, const std::string& file) {
  const std::string release =
      compat::kHasAotInductor ? compat::TorchVersionString() : "2.6 or later, the release of the runx that runs it,";
  return fmt::format(
      "compiled_step: no package for this trial at {} yet (package: auto, key {}); make it on the machine that runs "
      "the trial (PyTorch {} with CUDA) with `runx compile {}`, or: {}{}",
      package.path, package.key, release, file.empty() ? "FILE.yaml" : file,
      spec::CompileCommand(package, ToolPath("compile_step.py")), AlsoInTheWay(device));
}

/// Why a python model trial whose artifact is not made yet is refused: the command that makes it.
std::string MissingArtifact(const spec::PythonArtifact& a, const std::string& file) {
  return fmt::format(
      "model 'python': no TorchScript file of {} for this trial at {} yet (key {}); make it with `runx compile {}`, "
      "or: {}",
      a.source, a.path, a.key, file.empty() ? "FILE.yaml" : file,
      spec::TorchScriptCommand(a, ToolPath("compile_step.py")));
}

/// Identifies `t` on this machine and settles it when it cannot run here (no such device, a
/// technique that refuses the combination).
PreparedTrial Prepare(const nlohmann::json& planned, int repeat_index, const plugins::Registry& registry,
                      const std::string& build, const PrepareContext& options,
                      std::map<std::string, std::string>* platforms) {
  PreparedTrial p;
  // compiled_step's `package: auto`: the package this trial's key names, beside the store. The
  // trial runs (and is identified) with that file; until it exists the trial is refused with the
  // command that makes it.
  nlohmann::json config = planned;
  std::string package_problem;
  std::optional<spec::CompiledPackage> missing_package;
  // A python model trains the TorchScript file runx compile made from its builder, named by a key
  // over its source's content; the trial is identified by both files' content, not their paths.
  if (spec::IsPythonModel(config)) {
    auto artifact = spec::PythonModelArtifact(config, options.compiled_dir, compat::TorchVersionString());
    if (!artifact.reason.empty()) {
      package_problem = artifact.reason;
    } else {
      spec::SetArtifact(&config, artifact.path);
      if (!spec::ArtifactPresent(artifact.path)) package_problem = MissingArtifact(artifact, options.file);
    }
  }
  if (package_problem.empty() && spec::WantsAutoPackage(config)) {
    auto package = spec::AutoPackage(config, options.compiled_dir, compat::TorchVersionString());
    package_problem = package.reason;
    if (package_problem.empty()) {
      spec::SetPackage(&config, package.path);
      if (!spec::PackagePresent(package.path)) missing_package = std::move(package);
    }
  }
  const spec::ConfigIdentity id = spec::IdentifyConfig(config);
  p.config = id.used;
  p.inputs = id.inputs.dump();
  p.key.config_hash = id.hash;
  p.key.repeat_index = repeat_index;
  store::TrialRecord r;
  r.started_at = UtcNow();
  bool settled = false;
  std::string device_text = "auto";
  std::optional<c10::Device> device;
  try {
    device_text = spec::TrialConfig::From(p.config).device;
    device = SelectDevice(device_text);
    p.device = device->str();
    auto [it, inserted] = platforms->emplace(p.device, "");
    // CPU trials side by side (--devices cpu,cpu) share the cores: another platform.
    if (inserted)
      it->second = SideBySidePlatform(PlatformIdentity(*device), TrialsSideBySide(options.devices, p.device));
    p.key.platform_hash = it->second;
  } catch (const std::exception& e) {
    settled = true;
    r.status = TrialStatus::kFailed;
    r.error = e.what();
    // No platform to name: the device as written stands for it.
    p.key.platform_hash = spec::Sha256Hex("unavailable device " + device_text);
  }
  if (device && (missing_package || !package_problem.empty())) {  // no package yet, or none runx can name
    settled = true;
    r.status = TrialStatus::kIncompatible;
    r.error = missing_package                  ? MissingPackage(*missing_package, *device, options.file)
              : spec::WantsAutoPackage(config) ? package_problem + AlsoInTheWay(*device)
                                               : package_problem;
  } else if (device) {
    try {
      if (auto refusal = CheckTechniques(PlanTechniques(p.config, registry, *device))) {
        settled = true;
        r.status = TrialStatus::kIncompatible;
        r.error = *refusal;
      }
    } catch (const std::exception& e) {  // a technique that cannot be created or configured
      settled = true;
      r.status = TrialStatus::kFailed;
      r.error = e.what();
    }
  }
  p.key.env_hash = EnvironmentIdentity(build, p.key.platform_hash);
  if (settled) {
    r.device = p.device;
    r.finished_at = UtcNow();
    p.decided = std::move(r);
  }
  return p;
}

}  // namespace

nlohmann::json PrepareTrials(const nlohmann::json& request) {
  PrepareContext context;
  context.file = request.value("file", "");
  context.compiled_dir = request.value("compiled_dir", "");
  for (const auto& name : request.value("devices", nlohmann::json::array())) context.devices.push_back({name, {}});
  const auto registry = plugins::Registry::Discover(plugins::PluginDirs());
  PreparedSweep sweep;
  sweep.build = BuildIdentity(registry);
  sweep.environment = HostEnvironment();
  sweep.warnings = registry.errors();
  std::map<std::string, std::string> platforms;  // device -> platform identity
  for (const auto& t : request.at("trials"))
    sweep.trials.push_back(
        Prepare(t.at("config"), t.value("repeat_index", 0), registry, sweep.build, context, &platforms));
  return ToJson(sweep);
}

}  // namespace runx::engine
