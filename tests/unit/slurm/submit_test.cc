// Making a submission from an experiment's config and the command's options, and submitting it
// with a stand-in for sbatch (no SLURM needed; the real one: tests/integration/slurm_test.cc).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../../remove_tree.h"
#include "slurm/submit.h"

namespace runx::slurm {
namespace {
namespace fs = std::filesystem;

const Origin kOrigin{"/opt/runx/bin/runx", "", "/work", "20261203T153700Z"};

nlohmann::json Config(const std::string& device = "cpu") {
  return {{"name", "tiny net"}, {"device", device}, {"results", "results/runx.db"}};
}

// The message of the SubmitError that `make` throws; "" when it throws none.
template <typename F>
std::string Refusal(F make, std::string* hint = nullptr) {
  try {
    make();
  } catch (const SubmitError& e) {
    if (hint) *hint = e.hint();
    return e.what();
  }
  return "";
}

TEST(SlurmSubmit, TheJobSpecAndManifestOfARequest) {
  SubmitRequest r;
  r.file = "experiments/tiny.yaml";
  r.overrides = {"seed=3"};
  r.shards = 2;
  r.max_parallel = 1;
  r.gpus_per_trial = 1;
  r.partition = "gpu";
  r.time = "1:00:00";
  r.sbatch_options = {"--account=a"};
  r.setup = {"module load cuda"};
  r.any_build = true;
  const Submission s = MakeSubmission(r, Config("cuda"), 5, kOrigin);
  const JobSpec& spec = s.spec;
  EXPECT_EQ(spec.runx, "/opt/runx/bin/runx");
  EXPECT_EQ(spec.experiment, "/work/experiments/tiny.yaml");
  EXPECT_EQ(spec.overrides, (std::vector<std::string>{"seed=3"}));
  EXPECT_EQ(spec.workdir, "/work");
  EXPECT_EQ(spec.store, "/work/results/runx.db");  // the experiment's `results`, made absolute
  EXPECT_EQ(spec.artifacts, "/work/results/artifacts");
  EXPECT_EQ(spec.compiled, "/work/results/compiled");
  EXPECT_EQ(spec.layout.dir, "/work/results/slurm/tiny-net-20261203T153700Z");
  EXPECT_EQ(spec.sweep_id, "slurm:tiny-net-20261203T153700Z");
  EXPECT_EQ(spec.job_name, "runx-tiny-net");
  EXPECT_EQ(spec.shards, 2);
  EXPECT_EQ(spec.max_parallel, 1);
  EXPECT_EQ(spec.gpus_per_trial, 1);
  EXPECT_EQ(spec.partition, "gpu");
  EXPECT_EQ(spec.time, "1:00:00");
  EXPECT_EQ(spec.sbatch_options, (std::vector<std::string>{"--account=a"}));
  EXPECT_EQ(spec.setup, (std::vector<std::string>{"module load cuda"}));
  EXPECT_TRUE(spec.reuse);
  EXPECT_FALSE(spec.force);
  EXPECT_TRUE(spec.any_build);

  const Manifest& m = s.manifest;
  EXPECT_EQ(m.experiment, "/work/experiments/tiny.yaml");
  EXPECT_EQ(m.name, "tiny net");
  EXPECT_EQ(m.store, "/work/results/runx.db");
  EXPECT_EQ(m.shards, 2);
  EXPECT_EQ(m.shard_trials, (std::vector<int>{3, 2}));
  EXPECT_EQ(m.array_job, "");  // not submitted yet
  EXPECT_EQ(m.submitted_at, "");
  EXPECT_TRUE(s.warnings.empty());  // a GPU asked for
}

TEST(SlurmSubmit, DefaultsOneShardPerTrialAndWarnsOfACudaExperimentWithoutAGpu) {
  SubmitRequest r;
  r.file = "/abs/e.yaml";
  r.db = "../other/./x.db";
  r.no_reuse = true;
  const Submission s = MakeSubmission(r, Config("cuda:1"), 3, kOrigin);
  EXPECT_EQ(s.spec.shards, 3);
  EXPECT_EQ(s.spec.experiment, "/abs/e.yaml");
  EXPECT_EQ(s.spec.store, "/other/x.db");
  EXPECT_FALSE(s.spec.reuse);
  EXPECT_EQ(s.manifest.shard_trials, (std::vector<int>{1, 1, 1}));
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0].kind, Message::Kind::kWarning);
  EXPECT_EQ(s.warnings[0].text,
            "the experiment runs on 'cuda:1' but --gpus-per-trial is 0: the array tasks get a GPU only where the "
            "partition gives one by default");
}

TEST(SlurmSubmit, InvalidRequestsAreRefused) {
  SubmitRequest r;
  r.file = "e.yaml";
  std::string hint;
  EXPECT_EQ(Refusal([&] { MakeSubmission(r, Config(), 0, kOrigin); }, &hint), "'e.yaml' has no trial to run");
  EXPECT_EQ(hint, "");
  r.shards = 5;
  EXPECT_EQ(Refusal([&] { MakeSubmission(r, Config(), 4, kOrigin); }, &hint),
            "--shards 5 is more than the 4 trials of 'e.yaml'");
  EXPECT_EQ(hint, "use at most --shards 4 (one trial each)");
  r.shards = 0;
  r.db = "/my results/x.db";
  EXPECT_EQ(Refusal([&] { MakeSubmission(r, Config(), 4, kOrigin); }, &hint),
            "the submission's folder '/my results/slurm/tiny-net-20261203T153700Z' has a character sbatch cannot "
            "take in a log path (' ')");
  EXPECT_EQ(hint, "put the results store (--db) in a folder whose path has no blank, quote, backslash or '%'");
  r.db = std::nullopt;
  r.file = "a\nb.yaml";
  EXPECT_EQ(Refusal([&] { MakeSubmission(r, Config(), 4, kOrigin); }),
            "the path 'a\nb.yaml' has a line break; the scripts cannot name it");
  r.file = "e.yaml";
  Origin nowhere = kOrigin;
  nowhere.runx = "";
  nowhere.runx_error = "No such file or directory";
  EXPECT_EQ(Refusal([&] { MakeSubmission(r, Config(), 4, nowhere); }),
            "cannot find the runx binary (/proc/self/exe): No such file or directory");
}

TEST(SlurmSubmit, DryRunText) {
  SubmitRequest r;
  r.file = "e.yaml";
  const Submission s = MakeSubmission(r, Config(), 2, kOrigin);
  const std::string dir = s.spec.layout.dir;
  EXPECT_EQ(DryRunText(s.spec),
            "# runx submit: dry run: nothing is written or submitted\n# " + dir + "/array.sbatch\n" +
                ArrayScript(s.spec) + "\n# " + dir + "/merge.sbatch\n" + MergeScript(s.spec) +
                "\n# submitted with (ARRAY_JOB_ID: the job id the first sbatch prints):\n"
                "sbatch --parsable " +
                dir + "/array.sbatch\nsbatch --parsable --dependency=afterany:ARRAY_JOB_ID,singleton " + dir +
                "/merge.sbatch\n");
}

// SubmitJobs with a stand-in `sbatch` first on PATH.
class SlurmSubmitJobs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("runx_slurm_submit_" + std::to_string(::getpid()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_ / "bin");
    path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
    setenv("PATH", ((dir_ / "bin").string() + ":" + path_).c_str(), 1);
  }
  void TearDown() override {
    setenv("PATH", path_.c_str(), 1);
    runx::testing::RemoveTree(dir_.string());
  }
  // An sbatch that prints `array` for the array and `merge` for the merge job (as shell code).
  void Sbatch(const std::string& array, const std::string& merge) {
    const fs::path p = dir_ / "bin" / "sbatch";
    std::ofstream(p) << "#!/bin/sh\ncase \"$*\" in *--dependency*) " << merge << " ;; *) " << array << " ;; esac\n";
    fs::permissions(p, fs::perms::owner_all);
  }
  Submission Make() {
    SubmitRequest r;
    r.file = "e.yaml";
    r.db = (dir_ / "results" / "runx.db").string();
    return MakeSubmission(r, Config(), 2, {"/opt/runx", "", dir_.string(), "20261203T153700Z"});
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(SlurmSubmitJobs, BothJobsSubmittedAndTheManifestWritten) {
  Sbatch("echo 41", "echo '42;cluster'");
  const Submission s = Make();
  const Submitted done = SubmitJobs(s);
  EXPECT_TRUE(done.ok);
  EXPECT_TRUE(done.messages.empty());
  EXPECT_EQ(done.seeded, "");  // no results store yet: nothing to reuse
  EXPECT_EQ(done.manifest.array_job, "41");
  EXPECT_EQ(done.manifest.merge_job, "42");
  EXPECT_FALSE(done.manifest.submitted_at.empty());
  const Layout& l = s.spec.layout;
  EXPECT_TRUE(fs::exists(l.ArrayScript()));
  EXPECT_TRUE(fs::exists(l.MergeScript()));
  EXPECT_TRUE(fs::is_directory(l.ExitDir()));
  std::ifstream in(l.Manifest());
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, ToJson(done.manifest));
}

TEST_F(SlurmSubmitJobs, ARefusedArrayLeavesNothingBehind) {
  Sbatch("echo 'sbatch: error: invalid partition' >&2; exit 1", "echo 42");
  const Submission s = Make();
  const Submitted done = SubmitJobs(s);
  EXPECT_FALSE(done.ok);
  ASSERT_EQ(done.messages.size(), 1u);
  EXPECT_EQ(done.messages[0].kind, Message::Kind::kError);
  EXPECT_EQ(done.messages[0].text, "sbatch refused the job array (exit status 1): sbatch: error: invalid partition");
  EXPECT_EQ(done.messages[0].hint,
            "see the scripts with --dry-run; sinfo lists the partitions, and SLURM_CONF points at the cluster");
  EXPECT_FALSE(fs::exists(s.spec.layout.dir));
}

TEST_F(SlurmSubmitJobs, ARefusedMergeJobSaysHowToCancelOrMergeTheArray) {
  Sbatch("echo 41", "exit 2");
  const Submission s = Make();
  const Submitted done = SubmitJobs(s);
  EXPECT_FALSE(done.ok);
  ASSERT_EQ(done.messages.size(), 2u);
  EXPECT_EQ(done.messages[0].text, "sbatch refused the merge job (exit status 2): no message");
  EXPECT_EQ(done.messages[1].kind, Message::Kind::kNote);
  EXPECT_EQ(done.messages[1].text,
            "the job array 41 is submitted: cancel it with 'scancel 41', or merge its stores "
            "when it has ended: runx merge --runners-ended " +
                s.spec.store + " " + s.spec.layout.StoresDir() + "/shard-*.db");
  EXPECT_EQ(done.manifest.merge_job, "");
  EXPECT_TRUE(fs::exists(s.spec.layout.Manifest()));  // what --status reads
}

}  // namespace
}  // namespace runx::slurm
