// What sbatch, sacct and squeue print, as runx submit reads it (texts as SLURM 22.05 writes them)
// (running a command: tests/unit/base/process_test.cc).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "slurm/queue.h"

namespace runx::slurm {
namespace {

TEST(SlurmQueue, ParseJobId) {
  EXPECT_EQ(ParseJobId("4711\n"), "4711");
  EXPECT_EQ(ParseJobId("4711;cluster2\n"), "4711");  // --parsable on a federation
  EXPECT_EQ(ParseJobId("\n  4711  \n"), "4711");
  EXPECT_EQ(ParseJobId(""), std::nullopt);
  EXPECT_EQ(ParseJobId("Submitted batch job 4711\n"), std::nullopt);  // not --parsable
}

TEST(SlurmQueue, ExpandJobId) {
  EXPECT_EQ(ExpandJobId("12"), (std::vector<std::string>{"12"}));
  EXPECT_EQ(ExpandJobId("12_3"), (std::vector<std::string>{"12_3"}));
  EXPECT_EQ(ExpandJobId("12_[2-4%2]"), (std::vector<std::string>{"12_2", "12_3", "12_4"}));
  EXPECT_EQ(ExpandJobId("12_[0,3-4]"), (std::vector<std::string>{"12_0", "12_3", "12_4"}));
  EXPECT_EQ(ExpandJobId("12_[x]"), (std::vector<std::string>{"12_[x]"}));  // not understood: kept
}

TEST(SlurmQueue, ParseSacct) {
  const JobStates s = ParseSacct(
      "12_0|COMPLETED|0:0\n"
      "12_1|FAILED|3:0\n"
      "12_[2-3%2]|PENDING|0:0\n"
      "13|CANCELLED by 0|0:15\n");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s.at("12_0").state, "COMPLETED");
  EXPECT_EQ(s.at("12_1").state, "FAILED");
  EXPECT_EQ(s.at("12_1").exit_code, "3:0");
  EXPECT_EQ(s.at("12_2").state, "PENDING");
  EXPECT_EQ(s.at("12_3").state, "PENDING");
  EXPECT_EQ(s.at("13").state, "CANCELLED");
  EXPECT_EQ(s.at("13").exit_code, "0:15");
}

TEST(SlurmQueue, ParseSqueue) {
  const JobStates s = ParseSqueue(
      "12_1|RUNNING|None\n"
      "12_0|COMPLETED|None\n"
      "12_[2-3%2]|PENDING|JobArrayTaskLimit\n"
      "13|PENDING|Dependency\n");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s.at("12_1").state, "RUNNING");
  EXPECT_EQ(s.at("12_1").reason, "");
  EXPECT_EQ(s.at("12_3").reason, "JobArrayTaskLimit");
  EXPECT_EQ(s.at("13").reason, "Dependency");
  EXPECT_TRUE(ParseSqueue("").empty());
}

TEST(SlurmQueue, FinalStates) {
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"})
    EXPECT_TRUE(IsFinal(s)) << s;
  for (const char* s : {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "REQUEUED", ""})
    EXPECT_FALSE(IsFinal(s)) << s;
}

// Where SLURM's commands are not installed, the problem names the package that has them.
TEST(SlurmQueue, WithoutSlurmNamesItsPackage) {
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", "/nonexistent-runx-test", 1);
  const QueueReport q = QueryJobs({"17"});
  setenv("PATH", saved.c_str(), 1);
  EXPECT_TRUE(q.jobs.empty());
  EXPECT_EQ(q.source, "");
  EXPECT_EQ(q.problem,
            "squeue: not found on PATH; sacct: not found on PATH; SLURM's commands are not installed (Debian: "
            "slurm-client)");
}

}  // namespace
}  // namespace runx::slurm
