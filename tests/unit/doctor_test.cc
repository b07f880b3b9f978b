// `runx doctor`'s rows (engine/doctor.h): whether the machine is quiet enough to measure, said
// after a second of looking, beside the CPU facts.
#include "engine/doctor.h"

#include <algorithm>

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

}  // namespace
}  // namespace runx::engine
