#include "machine/nvml.h"

#include <fmt/format.h>
#include <boost/dll/shared_library.hpp>

#include <utility>

namespace runx::engine {
namespace {

// The few NVML types the calls below need, as the NVML ABI defines them (nvml.h): results are
// ints (0 = NVML_SUCCESS), devices opaque pointers, enums ints.
using Result = int;
using Device = NvmlSession::Device;
constexpr Result kSuccess = 0;
constexpr Result kInsufficientSize = 7;
enum ClockType : int { kGraphics = 0, kSm = 1, kMem = 2 };
struct Utilization {
  unsigned gpu;
  unsigned memory;
};

// A loaded NVML: looks up each function by name; a missing one reads as unsupported.
class Nvml {
 public:
  explicit Nvml(boost::dll::shared_library& lib) : lib_(lib) {}

  template <typename Fn>
  Fn* Get(const char* name) const {
    return lib_.has(name) ? &lib_.get<Fn>(name) : nullptr;
  }
  // Calls `name` with `args`; true on NVML_SUCCESS.
  template <typename... Args>
  bool Call(const char* name, Args... args) const {
    auto* fn = Get<Result(Args...)>(name);
    return fn != nullptr && fn(args...) == kSuccess;
  }

 private:
  boost::dll::shared_library& lib_;
};

template <typename T>
std::optional<T> Read(const Nvml& nvml, const char* name, Device d) {
  T value{};
  if (nvml.Call(name, d, &value)) return value;
  return std::nullopt;
}

std::optional<unsigned> Clock(const Nvml& nvml, const char* name, Device d, ClockType type) {
  unsigned mhz = 0;
  if (nvml.Call(name, d, static_cast<int>(type), &mhz)) return mhz;
  return std::nullopt;
}

// Counts the compute processes on `d` by asking for zero entries: NVML answers "insufficient
// size" with the count (or success when there are none). The newest entry point first.
std::optional<unsigned> ComputeProcesses(const Nvml& nvml, Device d) {
  for (const char* name : {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
                           "nvmlDeviceGetComputeRunningProcesses"}) {
    auto* fn = nvml.Get<Result(Device, unsigned*, void*)>(name);
    if (fn == nullptr) continue;
    unsigned count = 0;
    const Result r = fn(d, &count, nullptr);
    if (r == kSuccess || r == kInsufficientSize) return count;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> ComputeMode(const Nvml& nvml, Device d) {
  const auto mode = Read<int>(nvml, "nvmlDeviceGetComputeMode", d);
  if (!mode) return std::nullopt;
  switch (*mode) {
    case 0:
      return "default";
    case 1:
      return "exclusive_thread";
    case 2:
      return "prohibited";
    case 3:
      return "exclusive_process";
    default:
      return fmt::format("mode {}", *mode);
  }
}

NvmlGpu ReadGpu(const Nvml& nvml, unsigned index, Device d) {
  NvmlGpu g;
  g.index = index;
  char name[96] = {0};
  if (nvml.Call("nvmlDeviceGetName", d, static_cast<char*>(name), static_cast<unsigned>(sizeof name - 1)))
    g.name = name;
  g.max_sm_clock_mhz = Clock(nvml, "nvmlDeviceGetMaxClockInfo", d, kSm);
  g.max_mem_clock_mhz = Clock(nvml, "nvmlDeviceGetMaxClockInfo", d, kMem);
  g.app_sm_clock_mhz = Clock(nvml, "nvmlDeviceGetApplicationsClock", d, kSm);
  g.app_mem_clock_mhz = Clock(nvml, "nvmlDeviceGetApplicationsClock", d, kMem);
  g.sm_clock_mhz = Clock(nvml, "nvmlDeviceGetClockInfo", d, kSm);
  if (const auto mw = Read<unsigned>(nvml, "nvmlDeviceGetEnforcedPowerLimit", d)) g.power_limit_w = *mw / 1000.0;
  if (const auto p = Read<int>(nvml, "nvmlDeviceGetPersistenceMode", d)) g.persistence = *p != 0;
  g.compute_mode = ComputeMode(nvml, d);
  unsigned temperature = 0;
  if (nvml.Call("nvmlDeviceGetTemperature", d, 0 /* NVML_TEMPERATURE_GPU */, &temperature))
    g.temperature_c = temperature;
  if (const auto u = Read<Utilization>(nvml, "nvmlDeviceGetUtilizationRates", d)) g.utilization_pct = u->gpu;
  // Renamed "event reasons" in newer drivers; the old name stays exported.
  for (const char* fn : {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}) {
    if (auto mask = Read<unsigned long long>(nvml, fn, d)) {
      g.throttle_reasons = *mask;
      break;
    }
  }
  g.compute_processes = ComputeProcesses(nvml, d);
  return g;
}

}  // namespace

struct NvmlSession::Impl {
  boost::dll::shared_library lib;
  Nvml nvml{lib};
};

std::unique_ptr<NvmlSession> NvmlSession::Open(const std::string& library) {
  auto impl = std::make_unique<Impl>();
  boost::dll::fs::error_code ec;
  // A bare name goes through the loader's search path, as the driver's library is meant to be found.
  impl->lib.load(library,
                 boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local |
                     (library.find('/') == std::string::npos ? boost::dll::load_mode::search_system_folders
                                                             : boost::dll::load_mode::default_mode),
                 ec);
  if (ec) return nullptr;
  if (!impl->nvml.Call("nvmlInit_v2") && !impl->nvml.Call("nvmlInit")) return nullptr;
  return std::unique_ptr<NvmlSession>(new NvmlSession(std::move(impl)));
}

NvmlSession::NvmlSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NvmlSession::~NvmlSession() { impl_->nvml.Call("nvmlShutdown"); }

NvmlSession::Device NvmlSession::ByPciBusId(const std::string& bus_id) const {
  Device d = nullptr;
  if (impl_->nvml.Call("nvmlDeviceGetHandleByPciBusId_v2", bus_id.c_str(), &d) ||
      impl_->nvml.Call("nvmlDeviceGetHandleByPciBusId", bus_id.c_str(), &d))
    return d;
  return nullptr;
}

std::string NvmlSession::Name(Device d) const {
  char name[96] = {0};
  impl_->nvml.Call("nvmlDeviceGetName", d, static_cast<char*>(name), static_cast<unsigned>(sizeof name - 1));
  return name;
}

std::optional<unsigned long long> NvmlSession::TotalEnergyMj(Device d) const {
  return Read<unsigned long long>(impl_->nvml, "nvmlDeviceGetTotalEnergyConsumption", d);
}

std::optional<unsigned> NvmlSession::PowerMw(Device d) const {
  return Read<unsigned>(impl_->nvml, "nvmlDeviceGetPowerUsage", d);
}

std::optional<NvmlSnapshot> ReadNvml(const std::string& library) {
  const auto session = NvmlSession::Open(library);
  if (!session) return std::nullopt;
  const Nvml& nvml = session->impl_->nvml;
  NvmlSnapshot snap;
  char driver[96] = {0};
  if (nvml.Call("nvmlSystemGetDriverVersion", static_cast<char*>(driver), static_cast<unsigned>(sizeof driver - 1)))
    snap.driver_version = driver;
  int cuda = 0;
  if (nvml.Call("nvmlSystemGetCudaDriverVersion_v2", &cuda) || nvml.Call("nvmlSystemGetCudaDriverVersion", &cuda))
    snap.cuda_driver_version = cuda;
  unsigned count = 0;
  if (nvml.Call("nvmlDeviceGetCount_v2", &count) || nvml.Call("nvmlDeviceGetCount", &count)) {
    for (unsigned i = 0; i < count; ++i) {
      Device d = nullptr;
      if (nvml.Call("nvmlDeviceGetHandleByIndex_v2", i, &d) || nvml.Call("nvmlDeviceGetHandleByIndex", i, &d))
        snap.gpus.push_back(ReadGpu(nvml, i, d));
    }
  }
  return snap;
}

std::string DescribeThrottleReasons(uint64_t mask) {
  static const std::pair<uint64_t, const char*> kReasons[] = {{0x1, "gpu_idle"},
                                                              {0x2, "applications_clocks_setting"},
                                                              {0x4, "sw_power_cap"},
                                                              {0x8, "hw_slowdown"},
                                                              {0x10, "sync_boost"},
                                                              {0x20, "sw_thermal_slowdown"},
                                                              {0x40, "hw_thermal_slowdown"},
                                                              {0x80, "hw_power_brake_slowdown"},
                                                              {0x100, "display_clock_setting"}};
  if (mask == 0) return "none";
  std::string out;
  for (const auto& [bit, name] : kReasons) {
    if (!(mask & bit)) continue;
    if (!out.empty()) out += ", ";
    out += name;
    mask &= ~bit;
  }
  if (mask != 0) out += fmt::format("{}0x{:x}", out.empty() ? "" : ", ", mask);
  return out;
}

}  // namespace runx::engine
