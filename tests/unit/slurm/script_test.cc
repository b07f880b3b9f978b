// The sbatch scripts of `runx submit --slurm`, compared whole, then run for real by bash with a
// stand-in for runx that records its arguments: quoting, the per-task store, the exit status
// each job leaves, a merge of the shards that left a store.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "../../remove_tree.h"
#include "slurm/script.h"

namespace runx::slurm {
namespace {
namespace fs = std::filesystem;

JobSpec Example() {
  JobSpec s;
  s.runx = "/opt/runx/build/runx";
  s.experiment = "/home/me/exp/sweep.yaml";
  s.overrides = {"data.batch_size=64", "name=it's mine"};
  s.workdir = "/home/me/exp";
  s.store = "/shared/results/runx.db";
  s.artifacts = "/shared/results/artifacts";
  s.compiled = "/shared/results/compiled";
  s.layout = {"/shared/results/slurm/sweep-20261203T153700Z"};
  s.job_name = "runx-sweep";
  s.shards = 4;
  s.max_parallel = 2;
  s.gpus_per_trial = 1;
  s.cpus_per_task = 8;
  s.partition = "gpu";
  s.time = "2:00:00";
  s.sbatch_options = {"--account=perf"};
  s.setup = {"module load cuda/12.1"};
  s.sweep_id = "slurm:sweep-20261203T153700Z";
  return s;
}

TEST(SlurmScript, ArrayScriptWhole) {
  EXPECT_EQ(ArrayScript(Example()),
            R"S(#!/bin/bash
# runx submit: shard $SLURM_ARRAY_TASK_ID of 4 of /home/me/exp/sweep.yaml, one array task per shard.
# Each task writes a results store of its own (one writer per SQLite file); merge.sbatch adds
# them to /shared/results/runx.db once every task has ended.
#SBATCH --job-name=runx-sweep
#SBATCH --array=0-3%2
#SBATCH --time=2:00:00
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --output=/shared/results/slurm/sweep-20261203T153700Z/logs/shard-%a.out
#SBATCH --error=/shared/results/slurm/sweep-20261203T153700Z/logs/shard-%a.err
#SBATCH --partition=gpu
#SBATCH --no-requeue
#SBATCH --account=perf
cd /home/me/exp || exit 1
module load cuda/12.1
shard="${SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is a job array}"
store="/shared/results/slurm/sweep-20261203T153700Z/stores/shard-$shard.db"
export RUNX_ARTIFACT_DIR="${RUNX_ARTIFACT_DIR:-/shared/results/artifacts}"
export RUNX_COMPILED_DIR="${RUNX_COMPILED_DIR:-/shared/results/compiled}"
# Start from the results store as it was at submission (runx submit copied it), so that its ok
# trials are reused: a resubmission runs only what is missing. A plain copy of a file nobody
# writes; a requeued or repeated task keeps the store it has.
if [ -f "/shared/results/slurm/sweep-20261203T153700Z/stores/seed.db" ] && [ ! -e "$store" ]; then
  cp "/shared/results/slurm/sweep-20261203T153700Z/stores/seed.db" "$store.tmp" && mv "$store.tmp" "$store" ||
    echo "runx submit: note: could not copy /shared/results/slurm/sweep-20261203T153700Z/stores/seed.db: the shard's trials run again" >&2
fi
# SIGTERM (time limit, scancel) reaches runx too: it ends the running trial, keeps the
# finished ones, marks its run interrupted and exits 130, which is recorded below.
trap 'echo "runx submit: shard $shard: SIGTERM (time limit or scancel)" >&2' TERM
/opt/runx/build/runx run /home/me/exp/sweep.yaml --shard "$shard/4" --db "$store" --sweep-id slurm:sweep-20261203T153700Z --set data.batch_size=64 --set 'name=it'\''s mine'
status=$?
echo "$status" >"/shared/results/slurm/sweep-20261203T153700Z/exit/shard-$shard"
exit "$status"
)S");
}

TEST(SlurmScript, MergeScriptWholeAndItsDependency) {
  const JobSpec spec = Example();
  std::string expected =
      R"S(#!/bin/bash
# runx submit: adds the shard stores of the job array in array.sbatch to /shared/results/runx.db.
# Submitted with --dependency=afterany:<array job>,singleton: it runs once every task has ended,
# whatever their outcome, and merges what they finished; merges into the same store (jobs of
# the same name) run one at a time.
#SBATCH --job-name=runx-merge-MERGENAME
#SBATCH --ntasks=1
#SBATCH --output=/shared/results/slurm/sweep-20261203T153700Z/logs/merge.out
#SBATCH --error=/shared/results/slurm/sweep-20261203T153700Z/logs/merge.err
#SBATCH --partition=gpu
#SBATCH --no-requeue
#SBATCH --account=perf
cd /home/me/exp || exit 1
module load cuda/12.1
stores=()
for shard in $(seq 0 3); do
  store="/shared/results/slurm/sweep-20261203T153700Z/stores/shard-$shard.db"
  if [ -f "$store" ]; then
    stores+=("$store")
  else
    echo "runx submit: shard $shard left no results store (see /shared/results/slurm/sweep-20261203T153700Z/logs/shard-$shard.err)" >&2
  fi
done
if [ ${#stores[@]} -eq 0 ]; then
  echo "runx submit: error: no shard left a results store: nothing to merge" >&2
  status=1
else
  # Every task has ended: a run a shard store still has running was killed (SIGKILL, a node
  # that failed); --runners-ended marks it interrupted and merges the trials it finished.
  /opt/runx/build/runx merge --runners-ended /shared/results/runx.db "${stores[@]}"
  status=$?
  [ "$status" != 0 ] || rm -f "/shared/results/slurm/sweep-20261203T153700Z/stores/seed.db"
fi
echo "$status" >"/shared/results/slurm/sweep-20261203T153700Z/exit/merge"
exit "$status"
)S";
  expected.replace(expected.find("MERGENAME"), 9, MergeJobName(spec.store).substr(11));
  EXPECT_EQ(MergeScript(spec), expected);
  EXPECT_EQ(
      ArraySubmitCommand(spec),
      (std::vector<std::string>{"sbatch", "--parsable", "/shared/results/slurm/sweep-20261203T153700Z/array.sbatch"}));
  EXPECT_EQ(MergeSubmitCommand(spec, "4711"),
            (std::vector<std::string>{"sbatch", "--parsable", "--dependency=afterany:4711,singleton",
                                      "/shared/results/slurm/sweep-20261203T153700Z/merge.sbatch"}));
}

// A CPU cluster's submission: no GPU, CPU count, time limit, partition or throttle asked for.
TEST(SlurmScript, AsksOnlyForWhatWasGiven) {
  JobSpec s = Example();
  s.gpus_per_trial = 0;
  s.cpus_per_task = 0;
  s.time.clear();
  s.partition.clear();
  s.max_parallel = 0;
  s.sbatch_options.clear();
  const std::string array = ArrayScript(s), merge = MergeScript(s);
  EXPECT_NE(array.find("#SBATCH --array=0-3\n"), std::string::npos) << array;
  for (const char* absent : {"--gres", "--cpus-per-task", "--time", "--partition", "--account"}) {
    EXPECT_EQ(array.find(absent), std::string::npos) << absent;
    EXPECT_EQ(merge.find(absent), std::string::npos) << absent;
  }
  // The merge job never asks for GPUs or the tasks' time limit, whatever the array asks for.
  const std::string gpu_merge = MergeScript(Example());
  EXPECT_EQ(gpu_merge.find("--gres"), std::string::npos);
  EXPECT_EQ(gpu_merge.find("--time"), std::string::npos);
  EXPECT_EQ(gpu_merge.find("--cpus-per-task"), std::string::npos);
}

TEST(SlurmScript, ForceAndNoReuseStartEachShardEmpty) {
  JobSpec s = Example();
  s.force = true;
  s.any_build = true;
  std::string array = ArrayScript(s);
  EXPECT_EQ(array.find("seed.db"), std::string::npos) << array;
  EXPECT_NE(array.find("--db \"$store\" --force --any-build --sweep-id slurm:sweep-20261203T153700Z --set"),
            std::string::npos)
      << array;
  s = Example();
  s.reuse = false;
  array = ArrayScript(s);
  EXPECT_EQ(array.find("seed.db"), std::string::npos) << array;
}

// One name for every merge into one store, another for another store: SLURM's singleton runs
// the merges into a store one at a time, and those into two stores side by side.
TEST(SlurmScript, MergeJobName) {
  EXPECT_EQ(MergeJobName("/shared/results/runx.db"), MergeJobName("/shared/results/runx.db"));
  EXPECT_NE(MergeJobName("/shared/results/runx.db"), MergeJobName("/shared/results/other.db"));
  EXPECT_EQ(MergeJobName("/shared/results/runx.db").size(), std::string("runx-merge-").size() + 8);
  EXPECT_EQ(MergeJobName("/x").rfind("runx-merge-", 0), 0u);
}

TEST(SlurmScript, ArraySpec) {
  EXPECT_EQ(ArraySpec(4, 0), "0-3");
  EXPECT_EQ(ArraySpec(4, 2), "0-3%2");
  EXPECT_EQ(ArraySpec(4, 4), "0-3");  // no limit below the number of tasks
  EXPECT_EQ(ArraySpec(4, 10), "0-3");
  EXPECT_EQ(ArraySpec(1, 0), "0-0");
}

TEST(SlurmScript, ShellQuote) {
  EXPECT_EQ(ShellQuote("/a/b-c_d.yaml"), "/a/b-c_d.yaml");
  EXPECT_EQ(ShellQuote("data.batch_size=64"), "data.batch_size=64");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(ShellQuote(""), "''");
}

// Runs `script` with bash, the environment `env` (NAME=value ...) added; its exit status.
int Bash(const std::string& script, const std::string& env, std::string* output) {
  const std::string cmd = "env " + env + " bash " + script + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) output->append(buf, n);
  const int rc = pclose(p);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SlurmScriptRun : public ::testing::Test {
 protected:
  void SetUp() override {
    // A blank and a quote in the folder: the scripts must quote every path they use.
    root_ = fs::temp_directory_path() / ("runx slurm 'script' " + std::to_string(getpid()));
    runx::testing::RemoveTree(root_.string());
    fs::create_directories(root_ / "work");
    spec_.runx = (root_ / "fake runx").string();
    spec_.experiment = (root_ / "work" / "my sweep.yaml").string();
    spec_.overrides = {"name=it's $HOME"};
    spec_.workdir = (root_ / "work").string();
    spec_.store = (root_ / "results.db").string();
    spec_.artifacts = (root_ / "artifacts").string();
    spec_.layout = {(root_ / "sub").string()};
    spec_.job_name = "runx-x";
    spec_.shards = 3;
    spec_.setup = {"export FROM_SETUP=yes"};
    for (const auto& d : {spec_.layout.StoresDir(), spec_.layout.LogsDir(), spec_.layout.ExitDir()})
      fs::create_directories(d);
    // The stand-in: one argument a line into calls.txt (plus the working directory and the
    // environment the scripts set); `run` creates its --db store and exits with FAKE_STATUS.
    std::ofstream(spec_.runx) << "#!/bin/bash\n"
                                 "{ echo \"cwd=$PWD setup=$FROM_SETUP artifacts=$RUNX_ARTIFACT_DIR\";"
                                 "  for a in \"$@\"; do echo \"[$a]\"; done; echo; } >>\"$CALLS\"\n"
                                 "if [ \"$1\" = run ]; then touch \"$6\"; exit \"${FAKE_STATUS:-0}\"; fi\n";
    fs::permissions(spec_.runx, fs::perms::owner_all);
    calls_ = (root_ / "calls.txt").string();
  }
  void TearDown() override { runx::testing::RemoveTree(root_.string()); }
  std::string Env(const std::string& more) const { return "CALLS=" + ShellQuote(calls_) + " " + more; }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string path = (root_ / name).string();
    std::ofstream(path) << text;
    return ShellQuote(path);
  }
  fs::path root_;
  std::string calls_;
  JobSpec spec_;
};

TEST_F(SlurmScriptRun, ATaskRunsItsShardIntoItsOwnStoreAndRecordsItsExitStatus) {
  std::string out;
  const std::string script = Write("array.sbatch", ArrayScript(spec_));
  EXPECT_EQ(Bash(script, Env("SLURM_ARRAY_TASK_ID=1 FAKE_STATUS=0"), &out), 0) << out;
  const std::string store1 = spec_.layout.ShardStore("1");
  // No results store yet: nothing to start from; runx runs shard 1 of 3 into the task's store.
  EXPECT_EQ(Read(calls_), "cwd=" + spec_.workdir + " setup=yes artifacts=" + spec_.artifacts + "\n[run]\n[" +
                              spec_.experiment + "]\n[--shard]\n[1/3]\n[--db]\n[" + store1 +
                              "]\n[--set]\n[name=it's $HOME]\n\n");
  EXPECT_EQ(Read(spec_.layout.ShardExit("1")), "0\n");

  // With a seed store (the results store as submitted), a task starts its own store from a copy
  // of it, then runs; runx's exit status is the task's and is written down.
  std::ofstream(spec_.layout.SeedStore()) << "the results store";
  fs::remove(calls_);
  out.clear();
  EXPECT_EQ(Bash(script, Env("SLURM_ARRAY_TASK_ID=2 FAKE_STATUS=3 RUNX_ARTIFACT_DIR=/elsewhere"), &out), 3) << out;
  const std::string store2 = spec_.layout.ShardStore("2");
  EXPECT_EQ(Read(store2), "the results store");
  EXPECT_EQ(Read(calls_), "cwd=" + spec_.workdir + " setup=yes artifacts=/elsewhere\n[run]\n[" + spec_.experiment +
                              "]\n[--shard]\n[2/3]\n[--db]\n[" + store2 + "]\n[--set]\n[name=it's $HOME]\n\n");
  EXPECT_EQ(Read(spec_.layout.ShardExit("2")), "3\n");
  EXPECT_FALSE(fs::exists(store2 + ".tmp"));
  // A store the task has already (a task run again) is kept as it is.
  std::ofstream(store2) << "the task's own";
  out.clear();
  EXPECT_EQ(Bash(script, Env("SLURM_ARRAY_TASK_ID=2"), &out), 0) << out;
  EXPECT_EQ(Read(store2), "the task's own");

  // Outside a job array the script refuses to run.
  out.clear();
  EXPECT_NE(Bash(script, Env(""), &out), 0);
  EXPECT_NE(out.find("submit this script with sbatch: it is a job array"), std::string::npos) << out;
}

TEST_F(SlurmScriptRun, TheMergeJobMergesTheShardsThatLeftAStore) {
  std::ofstream(spec_.layout.ShardStore("0")) << "";
  std::ofstream(spec_.layout.ShardStore("2")) << "";
  std::ofstream(spec_.layout.SeedStore()) << "";
  std::string out;
  EXPECT_EQ(Bash(Write("merge.sbatch", MergeScript(spec_)), Env(""), &out), 0) << out;
  EXPECT_FALSE(fs::exists(spec_.layout.SeedStore()));  // no longer needed once merged
  EXPECT_EQ(out, "runx submit: shard 1 left no results store (see " + spec_.layout.ShardLog("1", "err") + ")\n");
  EXPECT_EQ(Read(calls_), "cwd=" + spec_.workdir + " setup=yes artifacts=\n[merge]\n[--runners-ended]\n[" +
                              spec_.store + "]\n[" + spec_.layout.ShardStore("0") + "]\n[" +
                              spec_.layout.ShardStore("2") + "]\n\n");
  EXPECT_EQ(Read(spec_.layout.MergeExit()), "0\n");
}

TEST_F(SlurmScriptRun, TheMergeJobFailsWhenNoShardLeftAStore) {
  std::string out;
  EXPECT_EQ(Bash(Write("merge.sbatch", MergeScript(spec_)), Env(""), &out), 1) << out;
  EXPECT_NE(out.find("runx submit: error: no shard left a results store: nothing to merge"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(calls_));  // runx was not run
  EXPECT_EQ(Read(spec_.layout.MergeExit()), "1\n");
}

}  // namespace
}  // namespace runx::slurm
