#include "engine/runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/cuda.h>

#include "engine/device.h"
#include "engine/environment.h"
#include "engine/trial.h"
#include "plugins/loader.h"
#include "runx/compat.h"
#include "spec/spec.h"
#include "store/store.h"
#include "version.h"
#ifdef RUNX_WITH_CUDA
#include "engine/cuda_support.h"
#endif

namespace runx::engine {
namespace {

std::vector<spec::Override> Overrides(const std::vector<std::string>& sets) {
  std::vector<spec::Override> out;
  for (const auto& s : sets) out.push_back({s});
  return out;
}

void PrintPluginErrors(const plugins::Registry& registry) {
  for (const auto& e : registry.errors()) fmt::print(stderr, "warning: {}\n", e);
}

std::string HumanBytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  return fmt::format("{:.1f} {}", b, units[u]);
}

/// The result table of one sweep, read back from the store (what you see is what was recorded).
void PrintSweepTable(const std::string& db, int64_t sweep_id) {
  const auto result = store::QueryReadOnly(db, fmt::format(
      "SELECT label, status, device, round(samples_per_s, 1) AS samples_per_s, "
      "round(step_ms_median, 2) AS step_ms, "
      "printf('%.2f-%.2f', step_ms_p10, step_ms_p90) AS p10_p90_ms, "
      "round(peak_mem_bytes / 1048576.0, 1) AS peak_mem_mib, round(final_loss, 4) AS final_loss, "
      "round(accuracy, 4) AS accuracy, error FROM trial_summary WHERE sweep_id = {} ORDER BY trial_id",
      sweep_id));
  fmt::print("{}", store::FormatResult(result, store::Format::kTable));
}

}  // namespace

int RunExperiment(const RunOptions& options) {
  const auto dirs = plugins::PluginDirs();
  const auto registry = plugins::Registry::Discover(dirs);
  PrintPluginErrors(registry);
  spec::Experiment exp;
  try {
    exp = spec::Load(options.file, Overrides(options.overrides), spec::SchemaSet::Load(dirs));
  } catch (const spec::SpecError& e) {
    fmt::print(stderr, "{}", e.Render());
    return 2;
  }
  const std::string db = options.db.value_or(exp.config.value("results", "results/runx.db"));
  try {
    auto store = store::Store::Open(db);
    const auto host = HostEnvironment();
    const int64_t experiment_id =
        store.AddExperiment(exp.config.at("name").get<std::string>(), options.file, exp.text, exp.text_sha256);
    store::SweepInfo info{experiment_id, UtcNow(), host.count("host") ? host.at("host") : "",
                          Version(), GitSha(), options.command_line};
    const int64_t sweep_id = store.BeginSweep(info);
    store.AddSweepEnvironment(sweep_id, host);

    if (!options.quiet)
      fmt::print(stderr, "runx: {} ({}), trial 1 of 1: {}\n", exp.config.at("name").get<std::string>(),
                 options.file, TrialLabel(exp.config));
    TrialOptions topts;
    const bool tty = isatty(fileno(stderr));
    if (!options.quiet) {
      topts.on_progress = [tty](const Progress& p) {
        const std::string loss = std::isnan(p.loss) ? "" : fmt::format("  loss {:.4f}", p.loss);
        fmt::print(stderr, "{}  {} step {}/{}{}{}", tty ? "\r" : "", p.warmup ? "warm-up " : "measured",
                   p.step, p.total, loss, tty ? "   " : "\n");
        if (tty && p.step == p.total) fmt::print(stderr, "\n");
      };
    }
    auto rec = RunTrial(exp.config, registry, topts);
    rec.sweep_id = sweep_id;
    rec.config_hash = exp.config_hash;
    rec.is_baseline = rec.label == "baseline";
    store.RecordTrial(rec);
    store.EndSweep(sweep_id, "ok", UtcNow());
    if (!options.quiet) {
      PrintSweepTable(db, sweep_id);
      fmt::print("results: {} (sweep {})\n", db, sweep_id);
    }
    return 0;
  } catch (const store::StoreError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}

int ValidateFiles(const std::vector<std::string>& files, const std::vector<std::string>& overrides) {
  const auto schemas = spec::SchemaSet::Load(plugins::PluginDirs());
  int errors = 0;
  for (const auto& f : files) {
    const auto diags = spec::Validate(f, Overrides(overrides), schemas);
    for (const auto& d : diags) fmt::print(stderr, "{}", d.Render());
    errors += static_cast<int>(diags.size());
    if (diags.empty()) fmt::print("{}: ok\n", f);
  }
  if (errors > 0) {
    fmt::print(stderr, "{} error{} in {} file{}\n", errors, errors == 1 ? "" : "s", files.size(),
               files.size() == 1 ? "" : "s");
    return 2;
  }
  return 0;
}

int Doctor() {
  const auto row = [](const std::string& k, const std::string& v) { fmt::print("{:<22}{}\n", k, v); };
  const auto env = HostEnvironment();
  row("runx", fmt::format("{} (git {})", Version(), GitSha()));
  row("LibTorch", compat::TorchVersionString());
  row("OS", env.at("os"));
  row("CPU", fmt::format("{} ({} logical cores)", env.at("cpu"), env.at("cpu_count")));
  row("threads", fmt::format("intra-op {}, inter-op {}", at::get_num_threads(), at::get_num_interop_threads()));
#ifdef __APPLE__
  row("MPS", compat::MpsAvailable() ? "built and available"
                                    : "not available (needs LibTorch's macOS arm64 build, macOS 12.3+ on Apple silicon)");
#else
  row("MPS", "not built (MPS exists only in LibTorch's macOS arm64 build)");
#endif
  const bool cuda = torch::cuda::is_available();
#ifdef RUNX_WITH_CUDA
  row("CUDA", cuda ? fmt::format("available, runtime {}, {} device(s)", env.at("cuda_runtime_version"),
                                 torch::cuda::device_count())
                   : "built, but no CUDA device is visible");
  for (int i = 0; cuda && i < static_cast<int>(torch::cuda::device_count()); ++i)
    row(fmt::format("  cuda:{}", i), cuda::DeviceSummary(i));
#else
  row("CUDA", "not built (this LibTorch is CPU-only; point CMAKE_PREFIX_PATH at a CUDA LibTorch)");
#endif
  row("cuDNN", env.at("cudnn_version"));
  std::string autodev;
  try {
    autodev = SelectDevice("auto").str();
  } catch (const DeviceError& e) {
    autodev = e.what();
  }
  row("device: auto", autodev);
  std::vector<std::string> amp;
  const auto devices = AvailableDevices();
  const auto usable = [&](c10::DeviceType d) {
    const std::string name = d == c10::DeviceType::CUDA ? "cuda:0" : d == c10::DeviceType::MPS ? "mps" : "cpu";
    return std::find(devices.begin(), devices.end(), name) != devices.end();
  };
  for (auto dev : {c10::DeviceType::CPU, c10::DeviceType::CUDA, c10::DeviceType::MPS})
    for (auto dt : {c10::kBFloat16, c10::kHalf})
      if (usable(dev) && compat::AutocastSupported(dev, dt, nullptr))
        amp.push_back(fmt::format("{}/{}", c10::DeviceTypeName(dev, true), dt == c10::kHalf ? "fp16" : "bf16"));
  row("autocast here", fmt::format("{}", fmt::join(amp, ", ")));
  const auto dirs = plugins::PluginDirs();
  const auto registry = plugins::Registry::Discover(dirs);
  row("plugins", fmt::format("{} found in {}", registry.plugins().size(), fmt::join(dirs, ":")));
  PrintPluginErrors(registry);
  return 0;
}

int ListPlugins() {
  const auto dirs = plugins::PluginDirs();
  const auto registry = plugins::Registry::Discover(dirs);
  fmt::print("{:<18}{:<10}{:<6}{:<10}{}\n", "name", "version", "api", "libtorch", "description");
  for (const auto& [name, p] : registry.plugins())
    fmt::print("{:<18}{:<10}{:<6}{:<10}{}\n", name, p.descriptor->version, fmt::format("v{}", p.descriptor->api_version),
               fmt::format("{}.{}", p.descriptor->torch_version / 100, p.descriptor->torch_version % 100),
               p.descriptor->description);
  fmt::print("searched: {}\n", fmt::join(dirs, ":"));
  PrintPluginErrors(registry);
  return registry.errors().empty() ? 0 : 1;
}

}  // namespace runx::engine
