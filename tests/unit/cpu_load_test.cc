// How busy other processes kept the CPUs (machine/cpu_load.h): from a fake /proc/stat to the
// exact figure, and for real, with a child process that spins while this one sleeps.
#include "machine/cpu_load.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../remove_tree.h"

namespace runx::engine {
namespace {

namespace fs = std::filesystem;

class CpuLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("runx_cpu_load_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    runx::testing::RemoveTree(root_.string());
    fs::create_directories(root_ / "proc");
  }
  void TearDown() override { runx::testing::RemoveTree(root_.string()); }
  void WriteStat(const std::string& text) { std::ofstream(root_ / "proc" / "stat") << text; }
  fs::path root_;
};

TEST_F(CpuLoadTest, OtherProcessesAreTheMachinesBusyTimeLessOurOwn) {
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  // user nice system idle iowait irq softirq steal guest guest_nice: busy 100+20+30+5+5+0 = 160
  WriteStat("cpu  100 20 30 1000 50 5 5 0 0 0\ncpu0 50 10 15 500 25 3 2 0 0 0\nintr 1 2 3\n");
  auto begin = SampleCpu(root_.string());
  ASSERT_TRUE(begin.has_value());
  EXPECT_DOUBLE_EQ(begin->busy_s, 160 * tick);
  // busy 300+20+80+15+5+10 = 430: +270 ticks; idle and iowait moved, guest (in user already) is not added
  WriteStat("cpu  300 20 80 1400 90 15 5 10 7 0\n");
  auto end = SampleCpu(root_.string());
  ASSERT_TRUE(end.has_value());
  EXPECT_DOUBLE_EQ(end->busy_s, 430 * tick);

  end->at = begin->at + std::chrono::seconds(2);
  end->self_s = begin->self_s + 70 * tick;  // this process: 70 of the 270 ticks
  const auto load = LoadBetween(*begin, *end, 4);
  ASSERT_TRUE(load.has_value());
  EXPECT_DOUBLE_EQ(load->other_cpus, 200 * tick / 2);
  EXPECT_EQ(load->cpus, 4);
  EXPECT_EQ(load->wall_s, 2);

  end->self_s = begin->self_s + 300 * tick;  // the ticks lag this process's own precise clock: never below 0
  EXPECT_EQ(LoadBetween(*begin, *end, 4)->other_cpus, 0);
}

TEST_F(CpuLoadTest, NoStatNoFigure) {
  EXPECT_FALSE(SampleCpu(root_.string()).has_value());
  EXPECT_FALSE(MachineBusySeconds(root_.string()).has_value());
  WriteStat("cpu0 1 2 3 4\n");  // no aggregate line first
  EXPECT_FALSE(MachineBusySeconds(root_.string()).has_value());
  WriteStat("cpu  1 2\n");
  EXPECT_FALSE(MachineBusySeconds(root_.string()).has_value());
}

TEST(CpuLoad, ASpanTooShortForTheTicksIsNotJudged) {
  CpuSample begin, end;
  end.at = begin.at + std::chrono::milliseconds(49);
  end.busy_s = 0.01;  // one unit of /proc/stat: over 49 ms it would be 0.2 CPUs, the busy limit
  EXPECT_FALSE(LoadBetween(begin, end, 2).has_value());
  end.at = begin.at + std::chrono::milliseconds(100);
  EXPECT_DOUBLE_EQ(LoadBetween(begin, end, 2)->other_cpus, 0.1);
  end.self_s = 0.005;  // this process's own share of that
  EXPECT_DOUBLE_EQ(LoadBetween(begin, end, 2)->other_cpus, 0.05);
  EXPECT_DOUBLE_EQ(LoadBetween(begin, end, 2)->self_cpus, 0.05);
}

// For real: a child spins on a CPU for about a second while this process sleeps in waitpid. More
// load from elsewhere only adds, so the bound holds on a busy machine too.
TEST(CpuLoad, AChildSpinningIsAnotherProcess) {
  const auto begin = SampleCpu();
  if (!begin) GTEST_SKIP() << "no /proc/stat here";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    volatile unsigned long spins = 0;
    while (std::chrono::steady_clock::now() < until) spins = spins + 1;
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const auto end = SampleCpu();
  ASSERT_TRUE(end.has_value());
  const auto load = LoadBetween(*begin, *end, OnlineCpus());
  ASSERT_TRUE(load.has_value());
  EXPECT_GE(load->other_cpus, 0.6) << "over " << load->wall_s << " s";
  EXPECT_GE(load->wall_s, 1.0);
  EXPECT_EQ(load->cpus, OnlineCpus());
}

TEST(CpuLoad, DoctorSaysWhetherItIsQuietEnough) {
  EXPECT_EQ(DescribeQuiet({0.031, 2, 1.0012}, "0.52"),
            "yes: other processes used 0.03 of 2 CPUs over 1 s; 1-minute load average 0.52");
  EXPECT_EQ(DescribeQuiet({1.62, 2, 1.0012}, "1.80"),
            "no: other processes used 1.62 of 2 CPUs over 1 s (0.20 or more is busy); verdicts measured now are "
            "downgraded when the load differs between runs; 1-minute load average 1.80");
  EXPECT_EQ(DescribeQuiet({1.6, 16, 1.0}, ""),  // the limit itself is busy, as for the verdicts
            "no: other processes used 1.60 of 16 CPUs over 1 s (1.60 or more is busy); verdicts measured now are "
            "downgraded when the load differs between runs");
}

}  // namespace
}  // namespace runx::engine
