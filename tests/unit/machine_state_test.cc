// The noise facts a run records (engine/machine_state.h), read from a fake /sys and /proc tree.
#include "engine/machine_state.h"

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

TEST_F(MachineState, WhatCannotBeReadIsLeftOut) {
  EXPECT_TRUE(CpuNoiseState(root_.string()).empty());
  Write("proc/loadavg", "garbage");
  EXPECT_TRUE(CpuNoiseState(root_.string()).empty());
}

}  // namespace
}  // namespace runx::engine
