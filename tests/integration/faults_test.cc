// Faults a user meets, through the real runx binary on real files (issue 30): a full disk, inputs
// that never end, interruptions, other runners, hostile text. Each test failed before its fix.
// Cases that mount a tmpfs need root and skip with the reason without it.
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../remove_tree.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;
using runx::testing::Runx;

// A tiny MLP; each step sleeps `ms` (test_sleep) so that a test can act while the trial runs.
std::string Experiment(int steps, int sleep_ms, const std::string& more = "") {
  return "name: faults\n"
         "device: cpu\n"
         "threads: 1\n"
         "model: {name: mlp, hidden: [16]}\n"
         "data: {source: synthetic, shape: [16], num_classes: 4, batch_size: 8}\n" +
         std::string("train: {warmup_steps: 1, steps: ") + std::to_string(steps) + ", eval: false}\n" +
         (sleep_ms > 0 ? "optimizations: {test_sleep: {ms: " + std::to_string(sleep_ms) + "}}\n" : "") + more;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Fills the file system holding `folder` to the last byte.
void Fill(const fs::path& folder) {
  const int fd = ::open((folder / "filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char> block(4096, 'x');
  while (::write(fd, block.data(), block.size()) > 0) {
  }
  for (size_t n = 512; n > 0; n /= 2)  // the last partial block
    while (::write(fd, block.data(), n) > 0) {
    }
  ::close(fd);
}

class Faults : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_faults_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
  }
  void TearDown() override {
    for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) ::umount2(it->c_str(), MNT_DETACH);
    unsetenv("RUNX_PLUGIN_PATH");
    runx::testing::RemoveTree(dir_.string());
  }
  // A tmpfs of `kib` KiB at dir_/name; "" or why there is none (not root).
  std::string MountTmpfs(const std::string& name, int kib, fs::path* at) {
    *at = dir_ / name;
    fs::create_directories(*at);
    const std::string options = "size=" + std::to_string(kib) + "k";
    if (::mount("tmpfs", at->c_str(), "tmpfs", 0, options.c_str()) != 0)
      return std::string("cannot mount a tmpfs (") + std::strerror(errno) + "): this case needs root";
    mounts_.push_back(at->string());
    return "";
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  fs::path dir_;
  std::vector<std::string> mounts_;
};

// `runx ARGS` ended by `timeout` after `seconds` (status 124): a hang fails the test, not the suite.
runx::testing::Result RunxWithin(int seconds, const std::string& args) {
  return runx::testing::Shell("timeout " + std::to_string(seconds) + " " RUNX_BIN " " + args);
}

// Starts the shell command `cmd` in the background; its pid.
pid_t SpawnShell(const std::string& cmd) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    _exit(127);
  }
  return pid;
}

// Runs `runx FILE --db DB -q` in the background and fills DB's disk once the run has begun (its
// store exists; the trial, 60 ms a step, runs for about 2 s); what runx said on stderr.
runx::testing::Result RunWhileTheDiskFills(const std::string& file, const std::string& db, const fs::path& disk,
                                           const fs::path& log) {
  const pid_t pid = SpawnShell(std::string(RUNX_BIN) + " " + file + " --db " + db + " -q 2>" + log.string());
  if (!runx::testing::WaitFor([&] { return fs::exists(db + "-wal"); }, 20)) {
    ::kill(pid, SIGKILL);
    runx::testing::Wait(pid);
    return {-1, "the run did not begin within 20 s", 0};
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Fill(disk);
  const int status = runx::testing::Wait(pid);
  return {status, ReadText(log), 0};
}

TEST_F(Faults, DiskFullSaysTheRecordIsLostWhenItCannotBeKept) {
  fs::path store;
  if (const auto why = MountTmpfs("store", 1024, &store); !why.empty()) GTEST_SKIP() << why;
  const std::string file = Write("e.yaml", Experiment(30, 60));
  const std::string db = (store / "s.db").string();
  const auto r = RunWhileTheDiskFills(file, db, store, dir_ / "log");
  EXPECT_EQ(r.status, 1) << r.out;
  const std::string& said = r.out;
  EXPECT_NE(said.find("the trial's record could not be kept either"), std::string::npos) << said;
  EXPECT_NE(said.find("No space left on device"), std::string::npos) << said;
  EXPECT_NE(said.find("the next run measures it again"), std::string::npos) << said;
  // Nothing half-written pretends to hold the trial: no empty or partial record file.
  std::error_code ec;
  for (fs::directory_iterator it(db + ".pending", ec), end; !ec && it != end; it.increment(ec))
    ADD_FAILURE() << "left in the pending folder: " << it->path() << " (" << fs::file_size(it->path()) << " bytes)";
}

TEST_F(Faults, DiskFullKeepsTheRecordWhereItCanAndTheNextRunWritesIt) {
  fs::path store, kept;
  if (const auto why = MountTmpfs("store", 1024, &store); !why.empty()) GTEST_SKIP() << why;
  fs::create_directories(dir_ / "kept");
  const std::string file = Write("e.yaml", Experiment(30, 60));
  const std::string db = (store / "s.db").string();
  fs::create_directory_symlink(dir_ / "kept", db + ".pending");  // the pending folder has room
  const auto r = RunWhileTheDiskFills(file, db, store, dir_ / "log");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("the trial's record is kept in"), std::string::npos) << r.out;
  std::vector<fs::path> records;
  for (const auto& e : fs::directory_iterator(dir_ / "kept")) records.push_back(e.path());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(nlohmann::json::accept(ReadText(records[0]))) << ReadText(records[0]);
  // With room again, the next run writes the kept record and measures nothing again.
  fs::remove(store / "filler");
  const auto next = Runx(file + " --db " + db + " --json");
  ASSERT_EQ(next.status, 0) << next.out;
  EXPECT_NE(next.out.find("\"fate\":\"reused\""), std::string::npos) << next.out;
  EXPECT_TRUE(fs::is_empty(dir_ / "kept"));
}

// Point 2: an input that never ends (a device, a FIFO) is an error at once, not a hang.
TEST_F(Faults, InputsThatNeverEndAreRefusedAtOnce) {
  const std::string fifo = (dir_ / "model.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string file = Write("e.yaml", Experiment(2, 0));
  const struct {
    std::string sets, key, kind;
  } cases[] = {
      {"--set model.name=torchscript --set model.path=/dev/zero", "model.path", "a character device"},
      {"--set model.name=torchscript --set model.path=" + fifo, "model.path", "a FIFO"},
      {"--set data.source=memmap --set data.path=/dev/zero --set data.labels=/dev/zero", "data.path",
       "a character device"},
  };
  for (const auto& c : cases) {
    for (const std::string command : {"validate ", "plan ", ""}) {
      const auto r =
          RunxWithin(20, command + file + (command.empty() ? " --db " + (dir_ / "s.db").string() : "") + " " + c.sets);
      EXPECT_EQ(r.status, 2) << command << c.sets << "\n" << r.out;
      EXPECT_NE(r.out.find("'" + c.key + "' is " + c.kind + ", not a regular file"), std::string::npos)
          << command << c.sets << "\n"
          << r.out;
    }
  }
}

// Points 8 and 9: `report -o` writes whole or not at all, and never replaces what is not a file.
TEST_F(Faults, ReportOutputIsWholeAndNeverReplacesSpecialFiles) {
  const std::string db = (dir_ / "s.db").string();
  ASSERT_EQ(Runx(Write("e.yaml", Experiment(2, 0)) + " --db " + db + " -q").status, 0);
  const std::string fifo = (dir_ / "page.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto r = Runx("report --db " + db + " -o " + fifo);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("is a FIFO, not a regular file"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_fifo(fifo));
  if (::getuid() == 0) {  // a device node of its own, as /dev/full would be
    const std::string device = (dir_ / "full").string();
    ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0) << std::strerror(errno);
    r = Runx("report --db " + db + " -o " + device);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("is a character device, not a regular file"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::is_character_file(device));
  }
  // A symlink stays a symlink; the page is written to the file it names.
  Write("real.html", "old");
  fs::create_symlink(dir_ / "real.html", dir_ / "link.html");
  r = Runx("report --db " + db + " -o " + (dir_ / "link.html").string());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.html"));
  EXPECT_NE(ReadText(dir_ / "real.html").find("<html"), std::string::npos);
  // A full disk keeps the old page and leaves no temporary beside it.
  fs::path out;
  if (const auto why = MountTmpfs("out", 256, &out); !why.empty()) GTEST_SKIP() << why;
  std::ofstream(out / "page.html") << "old page";
  Fill(out);
  r = Runx("report --db " + db + " -o " + (out / "page.html").string());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
  EXPECT_EQ(ReadText(out / "page.html"), "old page");
  for (const auto& e : fs::directory_iterator(out))
    EXPECT_TRUE(e.path().filename() == "page.html" || e.path().filename() == "filler") << e.path();
}

// Point 15: a full TMPDIR fails the trial with its cause.
TEST_F(Faults, FullTmpdirFailsTheTrialWithItsCause) {
  fs::path tmp;
  if (const auto why = MountTmpfs("tmp", 64, &tmp); !why.empty()) GTEST_SKIP() << why;
  Fill(tmp);
  const std::string own = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  const auto r = Runx(Write("e.yaml", Experiment(2, 0)) + " --json --db " + (dir_ / "s.db").string());
  own.empty() ? unsetenv("TMPDIR") : setenv("TMPDIR", own.c_str(), 1);
  EXPECT_NE(r.out.find("cannot write the trial's files in TMPDIR"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
}

// Point 12: a store on read-only media (or in a folder the user cannot write) is read by the
// commands that only read.
TEST_F(Faults, ReadOnlyStoresAreReadByHistoryCompareAndReport) {
  fs::path media;
  if (const auto why = MountTmpfs("media", 4096, &media); !why.empty()) GTEST_SKIP() << why;
  const std::string file = Write("e.yaml", Experiment(2, 0)), db = (media / "s.db").string();
  ASSERT_EQ(Runx(file + " --db " + db + " -q").status, 0);
  ASSERT_EQ(Runx(file + " --db " + db + " -q --force").status, 0);
  ASSERT_EQ(::mount(nullptr, media.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0) << std::strerror(errno);
  auto r = Runx("history --db " + db);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2 runs"), std::string::npos) << r.out;
  r = Runx("compare 1 2 --db " + db);
  EXPECT_EQ(r.status, 0) << r.out;
  r = Runx("report 1 2 --db " + db + " -o " + (dir_ / "r.html").string());
  EXPECT_EQ(r.status, 0) << r.out;
  r = Runx("query --db " + db + " \"SELECT count(*) AS n FROM runs\"");
  EXPECT_EQ(r.status, 0) << r.out;
  // A second store on read-only media is attached as an unchanging file; a plain ATTACH says how.
  const std::string other = (dir_ / "other.db").string();
  ASSERT_EQ(Runx(file + " --db " + other + " -q").status, 0);
  r = Runx("query --db " + other + " \"ATTACH '" + db + "' AS ro; SELECT count(*) AS n FROM ro.runs\"");
  EXPECT_NE(r.out.find("ATTACH 'file:/path/to/store.db?immutable=1' AS name"), std::string::npos) << r.out;
  r = Runx("query --db " + other + " --format csv \"ATTACH 'file:" + db +
           "?immutable=1' AS ro; SELECT count(*) AS n FROM ro.runs\"");
  EXPECT_EQ(r.out, "n\r\n2\r\n") << r.out;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(media)) files.push_back(e.path().filename().string());
  EXPECT_EQ(files, std::vector<std::string>{"s.db"});
}

// Point 13: a store that would keep nothing, or be written elsewhere than runx says, is refused.
TEST_F(Faults, InMemoryAndUriStoresAreRefused) {
  const std::string file = Write("e.yaml", Experiment(2, 0));
  auto r = Runx(file + " --db :memory:");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("error: ':memory:' is not a file path: runx keeps results in a file"), std::string::npos)
      << r.out;
  r = Runx(file + " --db file:" + (dir_ / "y.db").string());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("reads this as a URI"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "y.db"));
  r = Runx(file + " --db " + (dir_ / "a.db").string() + " -q");
  ASSERT_EQ(r.status, 0) << r.out;
  r = Runx("merge :memory: " + (dir_ / "a.db").string());
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("':memory:' is not a file path"), std::string::npos) << r.out;
}

// Point 14: a store deleted while a run writes to it is an error, and the trial's record is kept.
TEST_F(Faults, AStoreDeletedDuringARunIsAnError) {
  const std::string file = Write("e.yaml", Experiment(30, 60)), db = (dir_ / "del.db").string();
  const std::string log = (dir_ / "log").string();
  const pid_t pid = SpawnShell(std::string(RUNX_BIN) + " " + file + " --db " + db + " -q 2>" + log);
  ASSERT_TRUE(runx::testing::WaitFor([&] { return fs::exists(db + "-wal"); }, 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
  EXPECT_EQ(runx::testing::Wait(pid), 1);
  const std::string said = ReadText(log);
  EXPECT_NE(said.find("the results store '" + db + "' was deleted or moved while runx had it open"), std::string::npos)
      << said;
  EXPECT_NE(said.find("the trial's record is kept in"), std::string::npos) << said;
  EXPECT_EQ(said.find("results: "), std::string::npos) << said;
}

// The runx-merge-* folders in `tmp`.
std::vector<std::string> MergeFolders(const fs::path& tmp) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(tmp))
    if (e.path().filename().string().rfind("runx-merge-", 0) == 0) found.push_back(e.path().string());
  return found;
}

// Holds an exclusive lock on a store (as a `sqlite3` shell with locking_mode=EXCLUSIVE would)
// until it goes out of scope.
class StoreLock {
 public:
  explicit StoreLock(const std::string& path) : db_(path, SQLite::OPEN_READWRITE) {
    db_.exec("PRAGMA locking_mode = EXCLUSIVE");
    db_.exec("BEGIN EXCLUSIVE");
    db_.exec("COMMIT");
  }

 private:
  SQLite::Database db_;
};

// Points 4 and 5: a merge waits for a store another process holds locked (input and output,
// as `runx run` waits); a merge ended by a signal leaves neither the inputs' snapshots nor a new
// output; one killed with SIGKILL leaves its folder, which the next merge removes.
TEST_F(Faults, MergeWaitsForLockedStoresAndCleansUpWhenInterrupted) {
  const std::string file = Write("e.yaml", Experiment(2, 0));
  const std::string a = (dir_ / "a.db").string(), b = (dir_ / "b.db").string(), out = (dir_ / "out.db").string();
  for (const auto& db : {a, b, out}) ASSERT_EQ(Runx(file + " --db " + db + " -q --force").status, 0);
  const fs::path tmp = dir_ / "tmp";
  fs::create_directories(tmp);
  const std::string merge = "exec env TMPDIR=" + tmp.string() + " " RUNX_BIN " merge ";
  {  // a locked output is waited for, then merged into
    std::optional<StoreLock> lock(out);
    const pid_t pid = SpawnShell(merge + out + " " + a + " >/dev/null 2>&1");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), 0) << "merge did not wait for the locked output";
    lock.reset();
    EXPECT_EQ(runx::testing::Wait(pid), 0);
  }
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGKILL}) {
    StoreLock lock(b);  // the merge waits for its second input
    const std::string fresh = (dir_ / ("new" + std::to_string(sig) + ".db")).string();
    const pid_t pid = SpawnShell(merge + fresh + " " + a + " " + b + " >/dev/null 2>&1");
    ASSERT_TRUE(runx::testing::WaitFor([&] { return !MergeFolders(tmp).empty(); }, 20));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), 0) << "merge did not wait for the locked input";
    ::kill(pid, sig);
    EXPECT_EQ(runx::testing::Wait(pid), 128 + sig);
    EXPECT_FALSE(fs::exists(fresh)) << strsignal(sig);
    if (sig != SIGKILL) EXPECT_EQ(MergeFolders(tmp), std::vector<std::string>{}) << strsignal(sig);
  }
  // SIGKILL left its folder: the next merge removes it.
  EXPECT_EQ(MergeFolders(tmp).size(), 1u);
  EXPECT_EQ(runx::testing::Wait(SpawnShell(merge + out + " " + a + " >/dev/null 2>&1")), 0);
  EXPECT_EQ(MergeFolders(tmp), std::vector<std::string>{});
}

// Point 18: a config value with terminal escapes (here a sweep value, so also a label) reaches
// no terminal raw: run, plan, history and query print it escaped.
TEST_F(Faults, ControlCharactersInValuesArePrintedEscaped) {
  const std::string file = Write("e.yaml",
                                 "name: hostile\n"
                                 "device: cpu\n"
                                 "model: {name: torchscript, path: x.pt}\n"
                                 "data: {source: synthetic, shape: [16], num_classes: 4, batch_size: 8}\n"
                                 "train: {warmup_steps: 1, steps: 2, eval: false}\n"
                                 "sweep:\n"
                                 "  axes:\n"
                                 "    model.path: [/plain.pt, \"/b\\e]0;pwned\\a\\e[2J\\e[31m.pt\"]\n");
  const std::string db = " --db " + (dir_ / "s.db").string();
  const std::string outputs[] = {Runx(file + db).out, Runx("plan " + file).out, Runx("history" + db).out,
                                 Runx("query" + db + " \"SELECT label, error FROM trials\"").out};
  for (const std::string& out : outputs) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find('\a'), std::string::npos) << out;
    EXPECT_NE(out.find("\\e]0;pwned\\x07\\e[2J\\e[31m.pt"), std::string::npos) << out;
  }
}

// Point 7: a count whose pack cannot fit is refused before anything is written; a pack ended by
// a signal leaves no temporary file.
TEST_F(Faults, DataPackChecksItsSizeAndCleansUpWhenInterrupted) {
  const std::string file = Write("e.yaml", Experiment(2, 0)), out = (dir_ / "packed").string();
  auto r = Runx("data pack " + file + " --count 100000000000000 --out " + out);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("GB free; pack fewer samples or into another folder"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(out));
  r = Runx("data pack " + file + " --count 1e14 --out " + out);  // a count is a whole number
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_TRUE(fs::is_empty(out));
  for (const int sig : {SIGINT, SIGTERM}) {
    const pid_t pid =
        SpawnShell("exec " RUNX_BIN " data pack " + file + " --count 8000000 --out " + out + " >/dev/null 2>&1");
    const auto temporaries = [&] {
      int n = 0;
      for (const auto& e : fs::directory_iterator(out))
        n += e.path().filename().string().find(".tmp-") != std::string::npos;
      return n;
    };
    ASSERT_TRUE(runx::testing::WaitFor([&] { return temporaries() > 0; }, 30));
    ::kill(pid, sig);
    EXPECT_EQ(runx::testing::Wait(pid), 128 + sig);
    EXPECT_EQ(temporaries(), 0) << strsignal(sig);
  }
}

// Point 6: files of two packs (one stopped between its renames) are refused, not trained on.
TEST_F(Faults, FilesOfTwoPacksAreRefused) {
  const std::string file = Write("e.yaml", Experiment(2, 0)), out = (dir_ / "packed").string();
  ASSERT_EQ(Runx("data pack " + file + " --count 64 --out " + out).status, 0);
  fs::copy_file(out + "/train_labels.npy", dir_ / "old_labels.npy");
  fs::copy_file(out + "/runx-pack.json", dir_ / "old_manifest.json");
  ASSERT_EQ(Runx("data pack " + file + " --count 64 --set seed=1 --out " + out).status, 0);
  const std::string memmap = " --set data.source=memmap --set data.path=" + out + "/train_inputs.npy" +
                             " --set data.labels=" + out + "/train_labels.npy --db " + (dir_ / "s.db").string();
  auto r = Runx(file + memmap);  // the second pack whole: fine
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("failed"), std::string::npos) << r.out;
  // Stopped after its inputs were renamed: new inputs, old labels, old manifest.
  fs::copy_file(dir_ / "old_labels.npy", out + "/train_labels.npy", fs::copy_options::overwrite_existing);
  fs::copy_file(dir_ / "old_manifest.json", out + "/runx-pack.json", fs::copy_options::overwrite_existing);
  r = Runx(file + memmap + " --force");
  EXPECT_NE(r.out.find("is not the file `runx data pack` wrote beside the others"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("train_inputs.npy"), std::string::npos) << r.out;
}

// Point 17: a runner in another PID namespace of this host (a container sharing the volume and
// TMPDIR) is alive to the others: its claims are not taken over (each trial is measured once) and
// its trial folders are not removed under it.
TEST_F(Faults, RunnersInAnotherPidNamespaceAreSeenAlive) {
  if (std::system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "unshare --pid cannot make a PID namespace here: this case needs root";
  const std::string file =
      Write("e.yaml", Experiment(20, 40, "sweep: {axes: {train.warmup_steps: [1, 2, 3, 4, 5, 6]}}\n"));
  const std::string db = (dir_ / "s.db").string(), tmp = (dir_ / "tmp").string();
  fs::create_directories(tmp);
  const std::string run = "env TMPDIR=" + tmp + " " RUNX_BIN " " + file + " --db " + db + " -q >/dev/null 2>&1";
  const pid_t contained = SpawnShell("exec unshare --pid --fork --mount-proc " + run);
  // Once the contained runner measures its first trial, a second runner starts beside it.
  ASSERT_TRUE(runx::testing::WaitFor(
      [&] {
        for (const auto& e : fs::directory_iterator(tmp))
          if (e.path().filename().string().rfind("runx-trial-", 0) == 0) return true;
        return false;
      },
      30));
  const pid_t beside = SpawnShell("exec " + run);
  EXPECT_EQ(runx::testing::Wait(beside), 0);
  EXPECT_EQ(runx::testing::Wait(contained), 0);
  const auto count = [&](const std::string& where) {
    const auto r = Runx("query --db " + db + " --format csv \"SELECT count(*) AS n FROM trials" + where + "\"");
    return r.out.substr(r.out.find('\n') + 1);
  };
  EXPECT_EQ(count(""), "6\r\n") << "a trial measured twice";
  EXPECT_EQ(count(" WHERE status = 'ok'"), "6\r\n")
      << Runx("query --db " + db + " \"SELECT label, status, error FROM trials\"").out;
}

// Point 16: two variants whose data files are copies at two paths are one configuration: one
// trial measures both, and neither vanishes from the run's table, history or export.
TEST_F(Faults, VariantsThatAreOneConfigurationBothStayInTheRun) {
  const std::string file = Write("e.yaml", Experiment(2, 0)), plain = (dir_ / "plain").string();
  ASSERT_EQ(Runx("data pack " + file + " --count 64 --out " + plain).status, 0);
  fs::copy(plain, dir_ / "plain2");
  const std::string sweep = Write("m.yaml",
                                  "name: copies\n"
                                  "device: cpu\n"
                                  "model: {name: mlp, hidden: [16]}\n"
                                  "data: {source: memmap, path: plain/train_inputs.npy, labels: "
                                  "plain/train_labels.npy, batch_size: 8}\n"
                                  "train: {warmup_steps: 1, steps: 3, eval: false}\n"
                                  "sweep: {axes: {data.path: [plain/train_inputs.npy, plain2/train_inputs.npy]}}\n");
  const std::string db = " --db " + (dir_ / "s.db").string();
  const std::string cd = "cd " + dir_.string() + " && " RUNX_BIN " ";
  const auto shell = [](const std::string& cmd) { return runx::testing::Shell(cmd).out; };
  const std::string run = shell(cd + sweep + db + " --export-json " + (dir_ / "t.json").string());
  const auto table = nlohmann::json::parse(ReadText(dir_ / "t.json"));
  std::vector<std::string> labels;
  for (const auto& v : table["variants"]) labels.push_back(v["label"].get<std::string>());
  EXPECT_EQ(labels, (std::vector<std::string>{"baseline", "path=plain2/train_inputs.npy"})) << run << table.dump();
  const std::string history = shell(cd + "history" + db);
  EXPECT_NE(history.find("path=plain2/train_inputs.npy"), std::string::npos) << history;
  const auto members =
      Runx("query" + db + " --format csv \"SELECT count(*) AS n, count(DISTINCT trial_id) AS t FROM run_trials\"");
  EXPECT_EQ(members.out.substr(members.out.find('\n') + 1), "2,1\r\n") << members.out;
}

// Point 11: Ctrl-C while the end-of-run statistics are computed ends runx (status 130, no table)
// instead of being ignored until it exits 0. The store's trials get 300,000 measured steps each
// (written by SQL: measuring them would take minutes), so the statistics of a rerun that reuses
// every trial take a moment; SIGINT is sent as the last trial is reported.
TEST_F(Faults, CtrlCDuringTheEndOfRunStatisticsEndsRunx) {
  const std::string file =
      Write("e.yaml", Experiment(3, 0, "sweep: {axes: {train.warmup_steps: [1, 2, 3, 4, 5, 6]}}\n"));
  const std::string db = (dir_ / "s.db").string();
  ASSERT_EQ(Runx(file + " --db " + db + " -q").status, 0);
  {
    SQLite::Database store(db, SQLite::OPEN_READWRITE);
    store.exec(
        "WITH RECURSIVE n(i) AS (SELECT 3 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) "
        "INSERT INTO steps (trial_id, phase, step, wall_ms, samples) "
        "SELECT t.id, 'measure', n.i, 1.0 + (n.i % 7) * 0.01, 8 FROM trials t, n");
  }
  FILE* out = popen(("exec " RUNX_BIN " " + file + " --db " + db + " --json 2>/dev/null & echo $!").c_str(), "r");
  ASSERT_NE(out, nullptr);
  char line[4096];
  ASSERT_NE(fgets(line, sizeof line, out), nullptr);
  const pid_t pid = static_cast<pid_t>(std::stol(line));
  int ended = 0;
  std::string events;
  while (fgets(line, sizeof line, out) != nullptr) {
    events += line;
    if (std::string(line).find("\"event\":\"trial_end\"") != std::string::npos && ++ended == 6) {
      ::kill(pid, SIGINT);
      break;
    }
  }
  while (fgets(line, sizeof line, out) != nullptr) events += line;
  pclose(out);
  EXPECT_EQ(ended, 6) << events;
  // A signal before the sweep returned ends it as interrupted (sweep_end says so); one during the
  // statistics ends runx before sweep_end. Never a sweep_end of a run that went on as if unasked.
  EXPECT_EQ(events.find("\"interrupted\":false"), std::string::npos) << "runx went on to the end:\n" << events;
}

}  // namespace
