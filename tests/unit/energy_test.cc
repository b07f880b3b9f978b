// The energy meter (machine/energy.h): NVML through a fake driver library whose counter moves in
// steps as a real one does, and RAPL through a fake /sys/class/powercap tree.
#include "machine/energy.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "../remove_tree.h"

namespace runx::engine {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const EnergyOptions kQuick{5, 0.25};  // the fake's counter moves every 100 ms

TEST(GpuEnergy, TheCounterMovesInStepsAndTheMeterReadsThePowerBetweenThem) {
  auto opened = OpenGpuEnergyMeter("00000000:1B:00.0", kQuick, RUNX_TEST_FAKE_NVML);
  ASSERT_TRUE(opened.meter) << opened.why_not;
  EXPECT_EQ(opened.meter->source(), "nvml energy counter: Fake H200 (00000000:1B:00.0)");
  // Twice, at two phases of the counter's 100 ms steps: reading the counter at the span's ends
  // alone would be off by up to a step each (30 J of 300 W x 0.45 s = 135 J: 22%).
  for (auto offset : {0ms, 50ms}) {
    std::this_thread::sleep_for(offset);
    opened.meter->Start();
    std::this_thread::sleep_for(450ms);
    const EnergyReading r = opened.meter->Stop();
    ASSERT_TRUE(r.span) << r.why_not;
    EXPECT_GE(r.span->seconds, 0.45);
    EXPECT_NEAR(r.span->joules / r.span->seconds, 300.0, 300.0 * 0.05) << "offset " << offset.count() << " ms";
  }
}

TEST(GpuEnergy, WithoutACounterThePowerDrawIsSampledAndIntegrated) {
  auto opened = OpenGpuEnergyMeter("00000000:3B:00.0", kQuick, RUNX_TEST_FAKE_NVML);
  ASSERT_TRUE(opened.meter) << opened.why_not;
  EXPECT_EQ(opened.meter->source(), "nvml power draw every 5 ms: Fake L4 (00000000:3B:00.0)");
  opened.meter->Start();
  std::this_thread::sleep_for(300ms);
  const EnergyReading r = opened.meter->Stop();
  ASSERT_TRUE(r.span) << r.why_not;
  EXPECT_NEAR(r.span->joules, 72.5 * r.span->seconds, 1e-6);
}

TEST(GpuEnergy, ASpanTooShortForTheCounterHasNoFigureButAReason) {
  auto opened = OpenGpuEnergyMeter("00000000:1B:00.0", kQuick, RUNX_TEST_FAKE_NVML);
  ASSERT_TRUE(opened.meter);
  opened.meter->Start();
  const EnergyReading r = opened.meter->Stop();
  EXPECT_FALSE(r.span);
  EXPECT_EQ(r.why_not.substr(0, 25), "the measured steps lasted");
  EXPECT_NE(r.why_not.find("under the 0.25 s a reading needs"), std::string::npos) << r.why_not;
}

TEST(GpuEnergy, NoMeterWithoutNvmlOrForAnUnknownGpu) {
  EXPECT_EQ(OpenGpuEnergyMeter("00000000:1B:00.0", kQuick, "/no/such/libnvidia-ml.so.1").why_not,
            "NVML (/no/such/libnvidia-ml.so.1) could not be loaded or initialised");
  EXPECT_EQ(OpenGpuEnergyMeter("00000000:AA:00.0", kQuick, RUNX_TEST_FAKE_NVML).why_not,
            "NVML knows no GPU at PCI bus id 00000000:AA:00.0");
}

TEST(EnergySwitch, OnUnlessOffAndAnythingElseIsAnError) {
  const char* saved = std::getenv("RUNX_ENERGY");
  const std::string before = saved ? saved : "";
  auto with = [](const char* value) {
    if (value)
      ::setenv("RUNX_ENERGY", value, 1);
    else
      ::unsetenv("RUNX_ENERGY");
    return ReadEnergySwitch();
  };
  EXPECT_TRUE(with(nullptr).on);
  EXPECT_TRUE(with("").on);
  EXPECT_TRUE(with("on").on);
  EXPECT_FALSE(with("off").on);
  EXPECT_TRUE(with("off").error.empty());
  const EnergySwitch wrong = with("0");
  EXPECT_EQ(wrong.error, "RUNX_ENERGY='0': expected 'off' (no energy meter) or 'on' (the default)");
  if (saved)
    ::setenv("RUNX_ENERGY", before.c_str(), 1);
  else
    ::unsetenv("RUNX_ENERGY");
}

class CpuEnergyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("runx_energy_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    runx::testing::RemoveTree(root_.string());
    fs::create_directories(root_ / "sys/class/powercap");
  }
  void TearDown() override { runx::testing::RemoveTree(root_.string()); }
  void Zone(const std::string& dir, const std::string& name, const std::string& uj, const std::string& range) {
    const fs::path z = root_ / "sys/class/powercap" / dir;
    fs::create_directories(z);
    std::ofstream(z / "name") << name << "\n";
    if (!uj.empty()) std::ofstream(z / "energy_uj") << uj << "\n";
    std::ofstream(z / "max_energy_range_uj") << range << "\n";
  }
  fs::path root_;
};

TEST_F(CpuEnergyTest, ThePackagesCountersAreSummedAndAWrapIsUndone) {
  Zone("intel-rapl:0", "package-0", "1000000", "262143328850");
  Zone("intel-rapl:0:0", "core", "5", "262143328850");  // a part of package-0: not counted again
  Zone("intel-rapl:1", "package-1", "262142828850", "262143328850");
  Zone("intel-rapl:2", "psys", "7", "262143328850");  // the platform: holds the packages
  auto opened = OpenCpuEnergyMeter(root_.string(), {5, 0});
  ASSERT_TRUE(opened.meter) << opened.why_not;
  EXPECT_EQ(opened.meter->source(), "rapl: package-0 + package-1");
  opened.meter->Start();
  Zone("intel-rapl:0", "package-0", "3000000", "262143328850");  // +2 J
  Zone("intel-rapl:1", "package-1", "1500000", "262143328850");  // +0.5 J to the wrap, +1.5 J after
  Zone("intel-rapl:0:0", "core", "900000000", "262143328850");
  Zone("intel-rapl:2", "psys", "900000000", "262143328850");
  const EnergyReading r = opened.meter->Stop();
  ASSERT_TRUE(r.span) << r.why_not;
  EXPECT_DOUBLE_EQ(r.span->joules, 4.0);
}

TEST_F(CpuEnergyTest, WithoutAPackageZoneOrItsCounterTheReasonSaysWhich) {
  EXPECT_EQ(OpenCpuEnergyMeter(root_.string()).why_not,
            "no RAPL counters: " + (root_ / "sys/class/powercap").string() +
                " has no package zone (a CPU without RAPL, or a virtual machine that does not pass it through)");
  Zone("intel-rapl:0", "package-0", "", "262143328850");
  EXPECT_EQ(OpenCpuEnergyMeter(root_.string()).why_not,
            "the RAPL counter " + (root_ / "sys/class/powercap/intel-rapl:0/energy_uj").string() +
                " cannot be read: No such file or directory");
}

}  // namespace
}  // namespace runx::engine
