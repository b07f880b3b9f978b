// --devices parsed into device slots (sweep/device_slots.h): names, pinning, refusals.
#include "sweep/device_slots.h"
#include "trial/device.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace runx::engine {
namespace {

TEST(DeviceSlots, EachGpuIsPinnedThroughCudaVisibleDevices) {
  const auto slots = ParseDeviceSlots("cuda:0, cuda:2", 4, std::nullopt);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[0].name, "cuda:0");
  EXPECT_EQ(slots[0].env.at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(slots[1].name, "cuda:2");
  EXPECT_EQ(slots[1].env.at("CUDA_VISIBLE_DEVICES"), "2");
}

TEST(DeviceSlots, AllMeansEveryGpuAndFollowsCudaVisibleDevices) {
  EXPECT_EQ(ParseDeviceSlots("all", 3, std::nullopt).size(), 3u);
  // The parent sees GPUs 5 and 7 as cuda:0 and cuda:1: their children are pinned to 5 and 7.
  const auto slots = ParseDeviceSlots("all", 8, std::string("5,7"));
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[1].name, "cuda:1");
  EXPECT_EQ(slots[1].env.at("CUDA_VISIBLE_DEVICES"), "7");
  EXPECT_EQ(ParseDeviceSlots("cuda:0", 8, std::string("GPU-1234")).at(0).env.at("CUDA_VISIBLE_DEVICES"), "GPU-1234");
}

TEST(DeviceSlots, CpuSlotsRepeatAndPinNothing) {
  const auto slots = ParseDeviceSlots("cpu,cpu", 0, std::nullopt);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[0].name, "cpu");
  EXPECT_TRUE(slots[0].env.empty());
}

TEST(DeviceSlots, CpuTrialsOnCpuSlotsRunSideBySide) {
  const auto slots = ParseDeviceSlots("cpu,cpu,cuda:0", 1, std::nullopt);
  EXPECT_EQ(TrialsSideBySide(slots, "cpu"), 2);
  EXPECT_EQ(TrialsSideBySide(slots, "cuda:0"), 1);
  EXPECT_EQ(TrialsSideBySide({}, "cpu"), 1);
  EXPECT_EQ(TrialsSideBySide(ParseDeviceSlots("cpu", 0, std::nullopt), "cpu"), 1);
  EXPECT_EQ(DeviceSharing(2), "2 cpu trials side by side");
  EXPECT_EQ(DeviceSharing(1), "");
}

TEST(DeviceSlots, MistakesAreRefusedWithWhatWasExpected) {
  const auto message = [](const std::string& text, int gpus, bool mps_here = true) {
    try {
      ParseDeviceSlots(text, gpus, std::nullopt, mps_here);
    } catch (const DeviceSlotError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(
      message("cuda:0,cuda:0", 2),
      "--devices: 'cuda:0' is given twice; two trials on one GPU disturb each other's timings (give each GPU once)");
  EXPECT_EQ(message("cuda:3", 2), "--devices: 'cuda:3' does not exist: this machine has 2 GPUs (NVML's count)");
  // An index beyond int is no GPU either, not an internal error (issue 30, point 10).
  EXPECT_EQ(message("cuda:2147483648", 2), "--devices: 'cuda:2147483648' does not exist: no GPU has that index");
  EXPECT_EQ(message("gpu0", 2),
            "--devices: 'gpu0' is not a device; expected cuda:N, cpu or mps, comma-separated (e.g. --devices "
            "cuda:0,cuda:1), or all");
  EXPECT_EQ(message("cuda:0,", 2).find("'' is not a device"), 11u);
  EXPECT_NE(message("all", 0).find("no NVIDIA GPU found"), std::string::npos);
  EXPECT_EQ(message("mps,mps", 0), "--devices: 'mps' is given twice; a Mac has one MPS device");
  // A machine without the NVIDIA driver has no cuda:N, and one that is no Mac no mps (issue 30,
  // point 20: both were accepted and a cpu trial recorded device_slot cuda:0).
  EXPECT_EQ(message("cuda:0", 0),
            "--devices: 'cuda:0' does not exist: this machine has 0 GPUs (no NVIDIA driver is loaded)");
  EXPECT_EQ(message("mps", 0, false), "--devices: 'mps' does not exist here: MPS is the GPU of Apple silicon Macs");
  EXPECT_EQ(message("mps", 0, true), "no error");
  // Without NVML (-1) the GPU count is unknown: cuda:N is left to the trial.
  EXPECT_EQ(ParseDeviceSlots("cuda:5", -1, std::nullopt).at(0).env.at("CUDA_VISIBLE_DEVICES"), "5");
}

// Without NVML, the driver's list in /proc says how many GPUs there are (none without a driver).
TEST(DeviceSlots, GpuCountFromProcReadsTheDriversList) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / ("runx_proc_" + std::to_string(::getpid()));
  fs::create_directories(root);
  EXPECT_EQ(GpuCountFromProc(root.string()), 0);
  fs::create_directories(root / "driver" / "nvidia");
  EXPECT_EQ(GpuCountFromProc(root.string()), -1);
  fs::create_directories(root / "driver" / "nvidia" / "gpus" / "0000:3b:00.0");
  fs::create_directories(root / "driver" / "nvidia" / "gpus" / "0000:af:00.0");
  EXPECT_EQ(GpuCountFromProc(root.string()), 2);
  for (const char* gpu : {"0000:3b:00.0", "0000:af:00.0"}) fs::remove(root / "driver" / "nvidia" / "gpus" / gpu);
  for (const char* dir : {"driver/nvidia/gpus", "driver/nvidia", "driver", ""}) fs::remove(root / dir);
}

// A trial's `device: cuda:N` with N beyond int is a bad device, said so, not an internal error.
TEST(SelectDevice, AnIndexBeyondIntIsABadDevice) {
  try {
    SelectDevice("cuda:2147483648");
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "bad device 'cuda:2147483648': expected cuda:N with N a GPU index");
  }
}

}  // namespace
}  // namespace runx::engine
