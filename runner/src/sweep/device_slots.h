#pragma once
// `runx --devices`: the devices a sweep runs trials on at the same time, one trial per device.
// Torch-free: the parent names GPUs through CUDA_VISIBLE_DEVICES and NVML, never a CUDA context.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace runx::engine {

/// One place a trial runs: its name as recorded (`cuda:1`, `cpu`) and what pins the trial's child
/// process to it (CUDA_VISIBLE_DEVICES for a GPU: the child sees it as its only GPU, cuda:0).
struct DeviceSlot {
  std::string name;
  std::map<std::string, std::string> env;
};

class DeviceSlotError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Parses --devices: a comma-separated list of `cuda:N` (each GPU once), `cpu` (repeatable: the
/// trials then share the CPU's cores) and `mps`, or `all` (every GPU: `gpu_count`, NVML's count,
/// or the entries of `cuda_visible_devices` when that is set). `cuda_visible_devices` (the
/// parent's CUDA_VISIBLE_DEVICES, nullopt when unset) maps `cuda:N` to the N-th visible GPU, as
/// CUDA numbers them. Throws DeviceSlotError with a hint on anything else.
/// `mps` exists only where `mps_here` (a Mac).
#ifdef __APPLE__
inline constexpr bool kMpsPlatform = true;
#else
inline constexpr bool kMpsPlatform = false;
#endif
std::vector<DeviceSlot> ParseDeviceSlots(const std::string& text, int gpu_count,
                                         const std::optional<std::string>& cuda_visible_devices,
                                         bool mps_here = kMpsPlatform);

/// The NVIDIA GPUs the driver lists under `proc_root`/driver/nvidia/gpus (one folder each); 0
/// without /proc/driver/nvidia (no NVIDIA driver loaded), -1 when the driver is there but its list
/// cannot be read. For a machine where NVML cannot be loaded.
int GpuCountFromProc(const std::string& proc_root = "/proc");

/// ParseDeviceSlots with this machine's GPU count (NVML, else GpuCountFromProc) and
/// CUDA_VISIBLE_DEVICES.
std::vector<DeviceSlot> DeviceSlotsHere(const std::string& text);

/// How many trials run side by side on `device` (a trial's device as resolved: "cpu", "cuda:0")
/// with `slots`: for a CPU trial the number of `cpu` slots, whose trials share the CPU's cores; 1
/// for any other trial (each GPU is given once) and without --devices.
int TrialsSideBySide(const std::vector<DeviceSlot>& slots, const std::string& device);

/// What a trial's environment says of it (key device_sharing), e.g. "2 cpu trials side by side";
/// "" for a trial that had its device to itself.
std::string DeviceSharing(int side_by_side);

}  // namespace runx::engine
