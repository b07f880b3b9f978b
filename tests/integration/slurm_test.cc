// `runx submit --slurm` for real: the suite starts a one-node SLURM cluster of its own
// (scripts/slurm-local.sh: munged, slurmctld and slurmd from Debian's slurm-wlm and munge, in a
// temporary folder, on ports of its own) and stops it at the end. A tiny sweep is submitted as a
// job array of 2 shards and merged; the merged store holds the trials the same sweep run here
// holds. A shard that fails is reported, the merge keeps the other, and submitting again runs
// only what is missing. Where the cluster cannot start (SLURM or munge not installed), the tests
// that need it are skipped, saying why.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../remove_tree.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;
using runx::testing::Runx;
using runx::testing::Shell;

// Two variants (batch 4 and 8) of a tiny CNN on synthetic data, two repeats: four trials.
constexpr const char* kSweep =
    "name: tiny_slurm\n"
    "device: cpu\n"
    "model: {name: cnn, channels: [4, 8]}\n"
    "data: {source: synthetic, shape: [3, 8, 8], num_classes: 5, batch_size: 8}\n"
    "train: {warmup_steps: 1, steps: 4, optimizer: {name: sgd, lr: 0.01}}\n"
    "repeats: 2\n"
    "sweep: {mode: grid, axes: {data.batch_size: [4, 8]}}\n";

constexpr const char* kOkTrials =
    "SELECT config_hash, env_hash, repeat_index FROM trials WHERE status = 'ok' ORDER BY 1, 2, 3";

bool OnPath(const std::string& program) { return Shell("command -v " + program + " >/dev/null").status == 0; }

// Whether nothing listens on TCP `port` (any address), as slurmctld and slurmd will bind.
bool PortFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return free;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string SingleQuoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class Slurm : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "squeue"}) {
      if (!OnPath(p)) {
        skip_ = std::string("no SLURM cluster: '") + p +
                "' is not installed (Debian: apt-get install slurm-wlm munge; the test set, "
                "scripts/debian-packages-test.txt)";
        return;
      }
    }
    cluster_ = (fs::temp_directory_path() / ("runx_slurm_cluster_" + std::to_string(getpid()))).string();
    runx::testing::RemoveTree(cluster_);
    int port = 20000 + (getpid() % 2000) * 2;
    for (int tries = 0; tries < 50 && !(PortFree(port) && PortFree(port + 1)); ++tries) port += 2;
    env_ = "RUNX_SLURM_DIR=" + SingleQuoted(cluster_) + " RUNX_SLURM_PORT=" + std::to_string(port) + " ";
    const auto started = Shell(env_ + RUNX_SOURCE_DIR "/scripts/slurm-local.sh start");
    if (started.status != 0) {
      skip_ = "the one-node SLURM cluster did not start (scripts/slurm-local.sh start):\n" + started.out;
      Shell(env_ + RUNX_SOURCE_DIR "/scripts/slurm-local.sh stop");
      return;
    }
    started_ = true;
    setenv("SLURM_CONF", (cluster_ + "/slurm.conf").c_str(), 1);
  }
  static void TearDownTestSuite() {
    if (!started_) return;
    const auto stopped = Shell(env_ + RUNX_SOURCE_DIR "/scripts/slurm-local.sh stop");
    EXPECT_EQ(stopped.status, 0) << stopped.out;
    unsetenv("SLURM_CONF");
    runx::testing::RemoveTree(cluster_);
  }

 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_slurm_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(getpid()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    file_ = Path("sweep.yaml");
    std::ofstream(file_) << kSweep;
  }
  void TearDown() override { runx::testing::RemoveTree(dir_.string()); }
  void NeedCluster() const {
    if (!started_) GTEST_SKIP() << skip_;
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Query(const std::string& db, const std::string& sql) {
    const auto r = Runx("query --db " + db + " --format csv \"" + sql + "\"");
    EXPECT_EQ(r.status, 0) << r.out;
    return r.out;
  }
  /// The ok trials of the sweep run here with `runx run` (and `args`, e.g. --set), unsharded.
  std::string LocalSweep(const std::string& args = "") {
    const std::string whole = Path("whole.db");
    const auto r = Runx(file_ + " --db " + whole + " -q" + args);
    EXPECT_EQ(r.status, 0) << r.out;
    return Query(whole, kOkTrials);
  }
  /// The one submission folder below `dir_/slurm`.
  std::string SubmissionDir() const {
    std::vector<std::string> dirs;
    for (const auto& e : fs::directory_iterator(dir_ / "slurm")) dirs.push_back(e.path().string());
    std::sort(dirs.begin(), dirs.end());
    return dirs.empty() ? "" : dirs.back();
  }
  std::string Logs(const std::string& sub) const {
    std::string out;
    if (!fs::exists(sub + "/logs")) return out;
    for (const auto& e : fs::directory_iterator(sub + "/logs"))
      out += "--- " + e.path().filename().string() + "\n" + Read(e.path().string());
    return out;
  }

  static inline std::string skip_, cluster_, env_;
  static inline bool started_ = false;
  fs::path dir_;
  std::string file_;
};

TEST_F(Slurm, TheShardsRunOnTheClusterAndTheMergedStoreEqualsTheSweepRunHere) {
  NeedCluster();
  const std::string expected = LocalSweep();
  EXPECT_EQ(std::count(expected.begin(), expected.end(), '\n'), 5) << expected;  // header + 4 trials
  const std::string merged = Path("merged.db");
  const auto r = Runx("submit " + file_ + " --slurm --shards 2 --max-parallel 2 --db " + merged + " --wait");
  const std::string sub = SubmissionDir();
  ASSERT_EQ(r.status, 0) << r.out << Logs(sub);
  EXPECT_NE(r.out.find("runx submit: tiny_slurm (" + file_ + "): 4 trials in 2 shards\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("submitted job array "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" (2 tasks) and merge job "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("merged into " + merged + ": runx history tiny_slurm --db " + merged), std::string::npos)
      << r.out;

  // The merged store holds the trials of the sweep run whole (configuration, environment,
  // repeat), each once; each shard is a run of its own with its two trials.
  EXPECT_EQ(Query(merged, kOkTrials), expected);
  EXPECT_EQ(Query(merged,
                  "SELECT r.shard, s.status, s.trials, s.ok_trials, s.reused_trials FROM runs r "
                  "JOIN run_summary s ON s.run_id = r.id ORDER BY r.shard"),
            "shard,status,trials,ok_trials,reused_trials\r\n0/2,ok,2,2,0\r\n1/2,ok,2,2,0\r\n");

  // The shards are one sweep: history shows one run of both variants, and the sweep run here,
  // merged in beside it, has the same variants with the same identities (compare matches every
  // variant, none is only on one side).
  const auto history = Runx("history tiny_slurm --db " + merged + " --format csv");
  ASSERT_EQ(history.status, 0) << history.out;
  EXPECT_EQ(std::count(history.out.begin(), history.out.end(), '\n'), 3) << history.out;  // header + 2 variants
  EXPECT_NE(history.out.find("\r\n1,\"1,2\","), std::string::npos) << history.out;
  ASSERT_EQ(Runx("merge " + merged + " " + Path("whole.db")).status, 0);
  const auto compare = Runx("compare 1 3 --db " + merged + " --format json");
  ASSERT_EQ(compare.status, 0) << compare.out;
  const auto c = nlohmann::json::parse(compare.out);
  EXPECT_EQ(c["a"]["runs"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(c["b"]["runs"], nlohmann::json::array({3}));
  EXPECT_TRUE(c["only_in_a"].empty()) << compare.out;
  EXPECT_TRUE(c["only_in_b"].empty()) << compare.out;
  EXPECT_EQ(c["variants"].size(), 2u) << compare.out;
  // Each task's sweep id is the submission's.
  EXPECT_EQ(Query(merged, "SELECT DISTINCT sweep_uid FROM runs WHERE shard <> '0/1'"),
            "sweep_uid\r\nslurm:" + fs::path(sub).filename().string() + "\r\n");

  // What --status shows once everything has ended: every task, its exit status and its run.
  const auto status = Runx("submit --status " + sub);
  ASSERT_EQ(status.status, 0) << status.out;
  const std::string table = status.out.substr(status.out.find("shard  job"));
  std::istringstream lines(table);
  std::string header, shard0, shard1, merge;
  std::getline(lines, header);
  std::getline(lines, shard0);
  std::getline(lines, shard1);
  std::getline(lines, merge);
  EXPECT_NE(shard0.find("COMPLETED     0  run ok: 2 of 2 trials, 2 ok"), std::string::npos) << status.out;
  EXPECT_NE(shard1.find("COMPLETED     0  run ok: 2 of 2 trials, 2 ok"), std::string::npos) << status.out;
  EXPECT_NE(merge.find("COMPLETED     0  merged 2 stores into " + merged + " (new): 2 runs added"), std::string::npos)
      << status.out;
  // --status without a folder shows the newest submission beside the store.
  const auto newest = Runx("submit --status --db " + merged);
  EXPECT_EQ(newest.out, status.out);
  // Each task's report is in its log.
  EXPECT_NE(Read(sub + "/logs/shard-0.out").find("results: " + sub + "/stores/shard-0.db"), std::string::npos)
      << Logs(sub);
}

TEST_F(Slurm, AFailedShardIsReportedTheMergeKeepsTheOtherAndASecondSubmissionRunsOnlyWhatIsMissing) {
  NeedCluster();
  // One repeat (two trials, one a shard) is enough here.
  const std::string merged = Path("merged.db"), one = " --set repeats=1";
  const std::string expected = LocalSweep(one);
  EXPECT_EQ(std::count(expected.begin(), expected.end(), '\n'), 3) << expected;  // header + 2 trials
  // Shard 1 fails before runx starts.
  const auto failed = Runx("submit " + file_ + " --slurm --db " + merged + one +
                           " --setup '[ \"$SLURM_ARRAY_TASK_ID\" != 1 ] || { echo broken node >&2; exit 3; }' --wait");
  const std::string first = SubmissionDir();
  ASSERT_EQ(failed.status, 1) << failed.out << Logs(first);
  EXPECT_NE(failed.out.find("FAILED        -  no results store; shard-1.err: broken node"), std::string::npos)
      << failed.out;
  EXPECT_NE(failed.out.find("1 of 2 shards did not end ok: submitting the same again runs only the trials " + merged +
                            " lacks"),
            std::string::npos)
      << failed.out;
  EXPECT_NE(failed.out.find("merged 1 store into " + merged + " (new): 1 run added"), std::string::npos) << failed.out;
  EXPECT_EQ(Query(merged, "SELECT count(*) FROM trials WHERE status = 'ok'"), "count(*)\r\n1\r\n");

  // Again: shard 0 reuses its trial from the store, shard 1 runs its own.
  const auto again = Runx("submit " + file_ + " --slurm --db " + merged + one + " --wait");
  const std::string second = SubmissionDir();
  ASSERT_EQ(again.status, 0) << again.out << Logs(second);
  EXPECT_NE(again.out.find("reuse: the tasks start from a copy of " + merged + " (1 run, 1 trial)"), std::string::npos)
      << again.out;
  EXPECT_NE(again.out.find("run ok: 1 of 1 trials, 1 ok, 1 reused"), std::string::npos) << again.out;
  EXPECT_FALSE(fs::exists(second + "/stores/seed.db"));  // removed once merged
  EXPECT_EQ(Query(merged, kOkTrials), expected);
  EXPECT_EQ(Query(merged,
                  "SELECT r.shard, s.status, s.trials, s.reused_trials FROM runs r "
                  "JOIN run_summary s ON s.run_id = r.id ORDER BY r.id"),
            "shard,status,trials,reused_trials\r\n0/2,ok,1,0\r\n0/2,ok,1,1\r\n1/2,ok,1,0\r\n");
}

TEST_F(Slurm, SbatchRefusalsAreErrorsAndLeaveNothingBehind) {
  NeedCluster();
  const auto r = Runx("submit " + file_ + " --slurm --partition no_such_partition --db " + Path("x.db"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out,
            "runx: error: sbatch refused the job array (exit status 1): sbatch: error: invalid partition "
            "specified: no_such_partition\n"
            "hint: see the scripts with --dry-run; sinfo lists the partitions, and SLURM_CONF points at the cluster\n");
  EXPECT_TRUE(!fs::exists(dir_ / "slurm") || fs::is_empty(dir_ / "slurm")) << SubmissionDir();
}

// Needs no cluster: nothing is submitted.
TEST_F(Slurm, DryRunPrintsTheScriptsAndSubmitsNothing) {
  const auto r = Runx("submit " + file_ +
                      " --slurm --dry-run --shards 2 --max-parallel 1 --gpus-per-trial 2 --time 0:10:00 "
                      "--partition gpu --db " +
                      Path("r/runx.db") + " --set seed=7");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const std::string& line : std::vector<std::string>{
           "#SBATCH --array=0-1%1\n", "#SBATCH --gres=gpu:2\n", "#SBATCH --time=0:10:00\n", "#SBATCH --partition=gpu\n",
           "--shard \"$shard/2\" --db \"$store\" --sweep-id slurm:tiny_slurm-", " --set seed=7\n",
           "/stores/shard-$shard.db\"\n", "merge --runners-ended " + Path("r/runx.db") + " \"${stores[@]}\"\n",
           "sbatch --parsable --dependency=afterany:ARRAY_JOB_ID,singleton "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_NE(r.out.find("# " + Path("r/slurm/tiny_slurm-")), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Path("r")));  // nothing written
}

TEST_F(Slurm, InvalidRequestsAreRefusedBeforeAnythingIsWritten) {
  auto r = Runx("submit " + file_ + " --db " + Path("x.db"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "runx: error: name the scheduler to submit to: --slurm (the only one runx submits to)\n"
            "hint: runx submit " +
                file_ + " --slurm\n");
  r = Runx("submit " + file_ + " --slurm --shards 5 --db " + Path("x.db"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "runx: error: --shards 5 is more than the 4 trials of '" + file_ +
                       "'\n"
                       "hint: use at most --shards 4 (one trial each)\n");
  // Without SLURM's commands on PATH.
  r = Shell("env PATH=/nonexistent " RUNX_BIN " submit " + file_ + " --slurm --db " + Path("x.db"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out,
            "runx: error: cannot run 'sbatch': not found on PATH\n"
            "hint: run runx submit where SLURM's commands are (a login node of the cluster; Debian: apt-get "
            "install slurm-client); to try it on this machine, start a one-node cluster: "
            "scripts/slurm-local.sh start\n");
  EXPECT_TRUE(!fs::exists(dir_ / "slurm") || fs::is_empty(dir_ / "slurm"));
  r = Runx("submit --status " + dir_.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "runx: error: '" + dir_.string() + "' is not a submission's folder (it has no submission.json)\n");
}

}  // namespace

// A data-parallel trial whose ranks srun starts (RUNX_RANK_LAUNCHER=srun, docs/running.md): the
// ranks read their rank from SLURM_PROCID/SLURM_NTASKS and train exactly as the ranks runx starts
// itself; a rank that aborts ends the job step, and the trial is `crashed`, saying so.
TEST_F(Slurm, DataParallelRanksFromSrun) {
  NeedCluster();
  const std::string exp = Path("dp.yaml");
  const auto write = [&](const std::string& extra) {
    std::ofstream(exp)
        << "name: dp_srun\ndevice: cpu\nseed: 7\nmodel: {name: mlp, hidden: [16, 16]}\n"
           "data: {source: synthetic, shape: [12], num_classes: 3, batch_size: 4}\n"
           "train: {warmup_steps: 2, steps: 6, eval: false, optimizer: {name: sgd, lr: 0.2, momentum: 0.9}}\n"
           "optimizations: {data_parallel: {world_size: 2, backend: gloo}" +
               extra + "}\n";
  };
  const std::string losses = "SELECT round(loss, 6) FROM steps ORDER BY phase = 'measure', step";
  write("");
  const auto local = Runx(exp + " --db " + Path("local.db") + " -q");
  ASSERT_EQ(local.status, 0) << local.out;
  setenv("RUNX_RANK_LAUNCHER", "srun", 1);
  setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
  const auto srun = Runx("run " + exp + " --db " + Path("srun.db") + " -q");
  EXPECT_EQ(srun.status, 0) << srun.out;
  EXPECT_EQ(Query(Path("srun.db"),
                  "SELECT status, value FROM trials t JOIN environment e ON e.trial_id = t.id "
                  "WHERE e.key = 'data_parallel.launcher'"),
            "status,value\r\nok,environment\r\n");
  EXPECT_EQ(Query(Path("srun.db"), losses), Query(Path("local.db"), losses));

  write(", test_crash: {mode: abort, at_step: 3, rank: 1}");
  const auto crash = Runx("run " + exp + " --db " + Path("srun.db") + " -q");
  unsetenv("RUNX_RANK_LAUNCHER");
  unsetenv("RUNX_PLUGIN_PATH");
  ASSERT_EQ(crash.status, 0) << crash.out;
  // srun's exit status is the aborted task's (134) or, when it ended the step first, 143.
  const std::string error = Query(Path("srun.db"), "SELECT status, error FROM trials ORDER BY id DESC LIMIT 1");
  EXPECT_EQ(error.rfind("status,error\r\ncrashed,srun (2 ranks) exited with status 1", 0), 0u) << error;
  const std::string detail = Query(Path("srun.db"), "SELECT error_detail FROM trials ORDER BY id DESC LIMIT 1");
  EXPECT_NE(detail.find("task 1: Aborted"), std::string::npos) << detail;
}
