// `runx doctor`'s rows (worker/doctor.h): whether the machine is quiet enough to measure, said
// after a second of looking, beside the CPU facts.
#include "worker/doctor.h"

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

namespace runx::engine {
namespace {

TEST(Doctor, SaysWhetherTheMachineIsQuietEnoughToMeasure) {
  const auto report = Doctor();
  const auto& rows = report.rows;
  const auto at = [&](const std::string& name) {
    return std::find_if(rows.begin(), rows.end(), [&](const auto& row) { return row.first == name; });
  };
  const auto quiet = at("quiet to measure");
  ASSERT_NE(quiet, rows.end());
  EXPECT_EQ(quiet - at("BLAS"), 1);  // with the CPU's facts
  const std::string& v = quiet->second;
  EXPECT_TRUE(v.rfind("yes: other processes used ", 0) == 0 || v.rfind("no: other processes used ", 0) == 0) << v;
  EXPECT_NE(v.find(" CPUs over 1 s"), std::string::npos) << v;
}

// Which meter gives each device's energy per sample, or why none does.
TEST(Doctor, SaysWhatMetersEachDevicesEnergy) {
  const auto report = Doctor();
  const auto row =
      std::find_if(report.rows.begin(), report.rows.end(), [](const auto& r) { return r.first == "energy"; });
  ASSERT_NE(row, report.rows.end());
  const std::string& v = row->second;
  EXPECT_TRUE(v.rfind("cpu: rapl: package-", 0) == 0 || v.rfind("cpu: none: ", 0) == 0) << v;
  if (!std::filesystem::exists("/sys/class/powercap")) {
    EXPECT_EQ(v.rfind("cpu: none: no RAPL counters: /sys/class/powercap has no package zone", 0), 0u) << v;
  }
}

}  // namespace
}  // namespace runx::engine
