#include "sweep/device_slots.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "machine/nvml.h"

namespace runx::engine {
namespace {

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    out.push_back(part);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

std::vector<DeviceSlot> ParseDeviceSlots(const std::string& text, int gpu_count,
                                         const std::optional<std::string>& cuda_visible_devices, bool mps_here) {
  std::vector<std::string> visible;
  if (cuda_visible_devices) {
    for (const std::string& v : Split(*cuda_visible_devices))
      if (!v.empty()) visible.push_back(v);
  }
  const int gpus = cuda_visible_devices ? static_cast<int>(visible.size()) : gpu_count;
  std::vector<std::string> names;
  if (text == "all") {
    if (gpus <= 0)
      throw DeviceSlotError(cuda_visible_devices
                                ? "--devices all: CUDA_VISIBLE_DEVICES names no GPU"
                                : "--devices all: no NVIDIA GPU found (NVML, from the NVIDIA driver, lists none); "
                                  "name the devices instead, e.g. --devices cpu,cpu");
    for (int i = 0; i < gpus; ++i) names.push_back(fmt::format("cuda:{}", i));
  } else {
    names = Split(text);
  }
  std::vector<DeviceSlot> slots;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    DeviceSlot slot{name, {}};
    if (name == "cpu" || name == "mps") {
      if (name == "mps" && !mps_here)
        throw DeviceSlotError("--devices: 'mps' does not exist here: MPS is the GPU of Apple silicon Macs");
      if (name == "mps" && seen.count(name))
        throw DeviceSlotError("--devices: 'mps' is given twice; a Mac has one MPS device");
    } else if (name.rfind("cuda:", 0) == 0 && name.size() > 5 &&
               name.find_first_not_of("0123456789", 5) == std::string::npos) {
      int index = 0;
      const std::string digits = name.substr(5);
      if (std::from_chars(digits.data(), digits.data() + digits.size(), index).ec != std::errc()) {
        throw DeviceSlotError(fmt::format("--devices: '{}' does not exist: no GPU has that index", name));
      }
      if (seen.count(name))
        throw DeviceSlotError(
            fmt::format("--devices: '{}' is given twice; two trials on one GPU disturb each "
                        "other's timings (give each GPU once)",
                        name));
      if (gpus >= 0 && index >= gpus)
        throw DeviceSlotError(fmt::format("--devices: '{}' does not exist: this machine has {} GPU{} ({})", name, gpus,
                                          gpus == 1 ? "" : "s",
                                          cuda_visible_devices ? "CUDA_VISIBLE_DEVICES"
                                          : gpus == 0          ? "no NVIDIA driver is loaded"
                                                               : "NVML's count"));
      slot.env["CUDA_VISIBLE_DEVICES"] = cuda_visible_devices ? visible[index] : std::to_string(index);
    } else {
      throw DeviceSlotError(
          fmt::format("--devices: '{}' is not a device; expected cuda:N, cpu or mps, comma-separated "
                      "(e.g. --devices cuda:0,cuda:1), or all",
                      name));
    }
    seen.insert(name);
    slots.push_back(std::move(slot));
  }
  return slots;
}

int GpuCountFromProc(const std::string& proc_root) {
  const std::string driver = proc_root + "/driver/nvidia";
  struct stat st {};
  if (::stat(driver.c_str(), &st) != 0) return 0;
  DIR* dir = ::opendir((driver + "/gpus").c_str());
  if (!dir) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(dir)) n += e->d_name[0] != '.';
  ::closedir(dir);
  return n;
}

std::vector<DeviceSlot> DeviceSlotsHere(const std::string& text) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const auto nvml = ReadNvml();
  // Without NVML, the driver's own list; where that cannot be read either (-1), cuda:N is not
  // checked here and the trial's child says.
  const int gpus = nvml ? static_cast<int>(nvml->gpus.size()) : GpuCountFromProc();
  return ParseDeviceSlots(text, gpus, visible ? std::optional<std::string>(visible) : std::nullopt);
}

int TrialsSideBySide(const std::vector<DeviceSlot>& slots, const std::string& device) {
  if (device != "cpu") return 1;
  const auto cpus = std::count_if(slots.begin(), slots.end(), [](const DeviceSlot& s) { return s.name == "cpu"; });
  return std::max(1, static_cast<int>(cpus));
}

std::string DeviceSharing(int side_by_side) {
  return side_by_side > 1 ? fmt::format("{} cpu trials side by side", side_by_side) : "";
}

}  // namespace runx::engine
