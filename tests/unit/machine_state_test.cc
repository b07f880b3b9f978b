// The noise facts a run records (machine/machine_state.h), read from a fake /sys and /proc tree.
#include "machine/machine_state.h"

#include "machine/nvml.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../remove_tree.h"

namespace runx::engine {
namespace {

namespace fs = std::filesystem;

class MachineState : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("runx_machine_state_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    runx::testing::RemoveTree(root_.string());
    fs::create_directories(root_);
  }
  void TearDown() override { runx::testing::RemoveTree(root_.string()); }
  void Write(const std::string& path, const std::string& text) {
    const fs::path p = root_ / path;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path root_;
};

TEST_F(MachineState, GovernorBoostAndLoad) {
  for (int cpu = 0; cpu < 4; ++cpu) {
    Write("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_governor", "performance\n");
  }
  Write("sys/devices/system/cpu/cpufreq/boost", "1\n");
  Write("proc/loadavg", "0.52 0.48 0.40 1/123 4567\n");
  const auto env = CpuNoiseState(root_.string());
  EXPECT_EQ(env.at("noise.cpu_governor"), "performance");
  EXPECT_EQ(env.at("noise.cpu_boost"), "on");
  EXPECT_EQ(env.at("noise.load_average"), "0.52 0.48 0.40");
}

TEST_F(MachineState, MixedGovernorsAreGroupedByCpuRanges) {
  for (int cpu = 0; cpu < 10; ++cpu) {
    Write("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_governor",
          cpu < 4 || cpu == 9 ? "powersave" : "performance");
  }
  Write("sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "ignored");  // not a cpuN folder
  Write("sys/devices/system/cpu/intel_pstate/no_turbo", "1");
  const auto env = CpuNoiseState(root_.string());
  EXPECT_EQ(env.at("noise.cpu_governor"), "powersave (cpu0-3, cpu9), performance (cpu4-8)");
  EXPECT_EQ(env.at("noise.cpu_boost"), "off");
}

// The moving part, read again as a trial's measured steps end: load, CPU clocks, every GPU.
TEST_F(MachineState, WhatTheMachineDidAsTheStepsEnded) {
  Write("proc/loadavg", "1.52 0.98 0.40 3/123 4567\n");
  Write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2800000\n");
  Write("sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "3000000\n");
  Write("sys/devices/system/cpu/cpu2/cpufreq/scaling_cur_freq", "n/a\n");  // left out
  const auto env = NoiseStateAfterMeasuring(root_.string(), RUNX_TEST_FAKE_NVML);
  EXPECT_EQ(env.at("noise.load_average_after"), "1.52 0.98 0.40");
  EXPECT_EQ(env.at("noise.cpu_mhz_after"), "2900");
  EXPECT_EQ(env.at("noise.gpu0_sm_clock_mhz_after"), "345");
  EXPECT_EQ(env.at("noise.gpu1_utilization_after"), "87%");
  EXPECT_EQ(env.at("noise.gpu1_throttle_after"), "sw_power_cap, hw_thermal_slowdown");
  EXPECT_EQ(env.at("noise.gpu1_processes_after"), "2");
  EXPECT_EQ(env.count("noise.gpu0_max_clocks_mhz"), 0u);  // the fixed facts are the run's
  // Nothing readable: nothing recorded.
  runx::testing::RemoveTree(root_.string());
  EXPECT_TRUE(NoiseStateAfterMeasuring(root_.string(), "libnvidia-ml-not-here.so.1").empty());
}

TEST_F(MachineState, WhatCannotBeReadIsLeftOut) {
  EXPECT_TRUE(CpuNoiseState(root_.string()).empty());
  Write("proc/loadavg", "garbage");
  EXPECT_TRUE(CpuNoiseState(root_.string()).empty());
}

// The NVML reader through a real dlopen of a fake libnvidia-ml (tests/plugins/fake_nvml.cc).
TEST(GpuNoise, ReadsEveryGpuThroughNvml) {
  const auto snap = ReadNvml(RUNX_TEST_FAKE_NVML);
  ASSERT_TRUE(snap.has_value());
  EXPECT_EQ(snap->driver_version, "580.95.05");
  ASSERT_EQ(snap->gpus.size(), 2u);
  EXPECT_EQ(snap->gpus[0].name, "Fake H200");
  EXPECT_EQ(snap->gpus[1].max_sm_clock_mhz, 1981u);
  EXPECT_FALSE(snap->gpus[1].app_sm_clock_mhz.has_value());  // not supported there
  EXPECT_EQ(snap->gpus[1].throttle_reasons, 0x44u);          // through the older entry point
  EXPECT_EQ(snap->gpus[1].compute_processes, 2u);            // counted by asking for none

  const auto env = DescribeGpuNoise(*snap);
  EXPECT_EQ(env.at("noise.gpu_driver"), "580.95.05 (CUDA 13.0)");
  EXPECT_EQ(env.at("noise.gpu0_max_clocks_mhz"), "sm 1980, mem 3201");
  EXPECT_EQ(env.at("noise.gpu0_application_clocks_mhz"), "sm 1755, mem 3201");
  EXPECT_EQ(env.count("noise.gpu1_application_clocks_mhz"), 0u);
  EXPECT_EQ(env.at("noise.gpu0_power_limit_w"), "700");
  EXPECT_EQ(env.at("noise.gpu1_power_limit_w"), "72.5");
  EXPECT_EQ(env.at("noise.gpu0_persistence"), "on");
  EXPECT_EQ(env.at("noise.gpu1_compute_mode"), "exclusive_process");
  EXPECT_EQ(env.at("noise.gpu0_sm_clock_mhz_at_start"), "345");
  EXPECT_EQ(env.at("noise.gpu1_temperature_c_at_start"), "32");
  EXPECT_EQ(env.at("noise.gpu1_utilization_at_start"), "87%");
  EXPECT_EQ(env.at("noise.gpu0_throttle_at_start"), "gpu_idle");
  EXPECT_EQ(env.at("noise.gpu1_throttle_at_start"), "sw_power_cap, hw_thermal_slowdown");
  EXPECT_EQ(env.at("noise.gpu0_processes_at_start"), "0");
  EXPECT_EQ(env.at("noise.gpu1_processes_at_start"), "2");
}

TEST(GpuNoise, NoDriverMeansNoKeys) {
  EXPECT_FALSE(ReadNvml("/nonexistent/libnvidia-ml.so.1").has_value());
  EXPECT_FALSE(ReadNvml("libnvidia-ml-not-here.so.1").has_value());
  EXPECT_TRUE(DescribeGpuNoise(NvmlSnapshot{}).empty());
  EXPECT_EQ(DescribeThrottleReasons(0), "none");
  EXPECT_EQ(DescribeThrottleReasons(0x8 | 0x1000), "hw_slowdown, 0x1000");
}

}  // namespace
}  // namespace runx::engine
