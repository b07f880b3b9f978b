#include "worker/doctor.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/cuda.h>

#include "machine/cpu_load.h"
#include "machine/machine_state.h"
#include "plugins/loader.h"
#include "runx/compat.h"
#include "trial/device.h"
#include "trial/environment.h"
#include "version.h"
#include "worker/identity.h"
#ifdef RUNX_WITH_CUDA
#include "trial/cuda_support.h"
#endif

namespace runx::engine {
namespace {

/// Whether other processes leave the CPUs alone enough to measure: a second in which doctor
/// itself only sleeps, judged by the rule of runx's verdicts (report::BusyLimit).
std::string QuietToMeasure() {
  const auto begin = SampleCpu();
  if (begin) std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto end = begin ? SampleCpu() : std::nullopt;
  const auto load = end ? LoadBetween(*begin, *end, OnlineCpus()) : std::nullopt;
  if (!load) return "unknown: /proc/stat cannot be read (Linux shows the machine's CPU use there)";
  const auto noise = CpuNoiseState();
  const auto average = noise.find("noise.load_average");  // "0.52 0.48 0.40": the first is the last minute's
  return DescribeQuiet(*load, average == noise.end() ? "" : average->second.substr(0, average->second.find(' ')));
}

}  // namespace

DoctorReport Doctor() {
  DoctorReport report;
  const auto row = [&report](const std::string& k, const std::string& v) { report.rows.emplace_back(k, v); };
  const auto env = HostEnvironment();
  row("runx",
      fmt::format("{} (git {}{}, {} build)", Version(), GitSha(), GitDirty() == 1 ? ", uncommitted changes" : "",
                  BuildType().empty() ? "unknown" : BuildType()));
  row("LibTorch", LibTorchRelease());
  row("AOTInductor", HasAotInductor() ? "built: packages load (model: aoti, compiled_step)"
                                      : "not built (LibTorch 2.6 or later loads packages: model: aoti, compiled_step)");
  row("OS", env.at("os"));
  row("CPU", fmt::format("{} ({} logical cores)", env.at("cpu"), env.at("cpu_count")));
  row("threads", fmt::format("intra-op {}, inter-op {}", at::get_num_threads(), at::get_num_interop_threads()));
  const std::string blas = env.at("blas");
  row("BLAS", IsReferenceBlas(blas) ? blas +
                                          " (the reference BLAS: fp32 matrix products on the CPU run about 15x "
                                          "slower than with OpenBLAS; apt-get install libopenblas0-openmp)"
                                    : blas);
  row("quiet to measure", QuietToMeasure());
#ifdef __APPLE__
  row("MPS", compat::MpsAvailable()
                 ? "built and available"
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
  // What meters a trial's energy on each device (joules_per_sample, power_w), or why nothing does.
  std::vector<std::string> energy;
  for (const std::string& name : AvailableDevices()) {
    if (name != "cpu" && name != "cuda:0" && name != "mps") continue;  // one GPU speaks for the others
    const EnergyMeterOrWhy m = OpenEnergyMeter(c10::Device(name));
    energy.push_back(fmt::format("{}: {}", name, m.meter ? m.meter->source() : "none: " + m.why_not));
  }
  row("energy", fmt::format("{}", fmt::join(energy, "; ")));
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
  row("data_parallel",
      fmt::format("gloo {}, nccl {}", compat::kHasGloo ? "built" : "not built (no gloo headers: install libgloo-dev)",
                  compat::kHasNccl ? "built" : "not built (needs LibTorch with CUDA and nccl.h)"));
  const auto dirs = plugins::PluginDirs();
  const auto registry = plugins::Registry::Discover(dirs);
  row("plugins", fmt::format("{} found in {}", registry.plugins().size(), fmt::join(dirs, ":")));
  report.plugin_errors = registry.errors();
  return report;
}

PluginList ListPlugins() {
  PluginList list;
  list.dirs = plugins::PluginDirs();
  const auto registry = plugins::Registry::Discover(list.dirs);
  for (const auto& [name, p] : registry.plugins())
    list.plugins.push_back({name, p.descriptor->version, fmt::format("v{}", p.descriptor->api_version),
                            fmt::format("{}.{}", p.descriptor->torch_version / 100, p.descriptor->torch_version % 100),
                            p.descriptor->description});
  list.errors = registry.errors();
  return list;
}

std::string LibTorchRelease() { return compat::TorchVersionString(); }

bool HasAotInductor() { return compat::kHasAotInductor; }

}  // namespace runx::engine
