#include "base/files.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

namespace runx::base {
namespace {
namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_base_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (mounted_) ::umount2(mounted_->c_str(), MNT_DETACH);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
      if (fs::is_directory(fs::symlink_status(e.path()))) {
        for (const auto& f : fs::directory_iterator(e.path(), ec)) fs::remove(f.path(), ec);
      }
      fs::remove(e.path(), ec);
    }
    fs::remove(dir_, ec);
  }
  // Only `name` (and what `also` names) is in the folder: no temporary left behind.
  void ExpectOnly(const fs::path& folder, const std::set<std::string>& names) {
    for (const auto& e : fs::directory_iterator(folder))
      EXPECT_TRUE(names.count(e.path().filename().string())) << "left behind: " << e.path();
  }
  fs::path dir_;
  std::optional<fs::path> mounted_;
};

TEST_F(Files, WritesWholeReplacesAndKeepsPermissions) {
  const fs::path f = dir_ / "out.txt";
  EXPECT_EQ(WriteFileAtomically(f.string(), "first"), "");
  EXPECT_EQ(Read(f), "first");
  fs::permissions(f, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(WriteFileAtomically(f.string(), std::string(3 << 20, 'z')), "");
  EXPECT_EQ(Read(f), std::string(3 << 20, 'z'));
  EXPECT_EQ(fs::status(f).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  ExpectOnly(dir_, {"out.txt"});
}

TEST_F(Files, FollowsASymlinkAndKeepsIt) {
  std::ofstream(dir_ / "real") << "old";
  fs::create_symlink("real", dir_ / "link");
  EXPECT_EQ(WriteFileAtomically((dir_ / "link").string(), "new"), "");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link"));
  EXPECT_EQ(Read(dir_ / "real"), "new");
  ExpectOnly(dir_, {"real", "link"});
}

TEST_F(Files, RefusesWhatIsNotARegularFile) {
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(NotRegularFileKind(fifo.string()), "a FIFO");
  EXPECT_EQ(WriteFileAtomically(fifo.string(), "x"),
            "'" + fifo.string() + "' is a FIFO, not a regular file: runx replaces only regular files");
  EXPECT_TRUE(fs::is_fifo(fifo));
  fs::create_directory(dir_ / "folder");
  EXPECT_NE(WriteFileAtomically((dir_ / "folder").string(), "x").find("is a directory"), std::string::npos);
  EXPECT_EQ(NotRegularFileKind("/dev/null"), "a character device");
  if (getuid() == 0) {  // a device node of the test's own (as root, a mistake would replace it)
    const fs::path device = dir_ / "full";
    ASSERT_EQ(mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0) << std::strerror(errno);
    EXPECT_NE(WriteFileAtomically(device.string(), "x").find("is a character device"), std::string::npos);
    EXPECT_TRUE(fs::is_character_file(device));
  }
  ExpectOnly(dir_, {"fifo", "folder", "full"});
  EXPECT_NE(WriteFileAtomically((dir_ / "no" / "such" / "dir").string(), "x").find("cannot create"), std::string::npos);
}

TEST_F(Files, AFullDiskKeepsTheOldFileAndLeavesNoTemporary) {
  const fs::path disk = dir_ / "disk";
  fs::create_directories(disk);
  if (mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs (" << std::strerror(errno) << "): this case needs root";
  mounted_ = disk;
  const fs::path f = disk / "page.html";
  EXPECT_EQ(WriteFileAtomically(f.string(), "old page"), "");
  const std::string error = WriteFileAtomically(f.string(), std::string(256 << 10, 'x'));
  EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
  EXPECT_EQ(Read(f), "old page");
  ExpectOnly(disk, {"page.html"});
}

TEST_F(Files, ReadsAFileWholeOrSaysWhy) {
  const std::string bytes("a\0b\r\nc", 6);
  std::ofstream(dir_ / "bytes", std::ios::binary) << bytes;
  EXPECT_EQ(ReadFile((dir_ / "bytes").string()), bytes);
  std::ofstream(dir_ / "empty");
  EXPECT_EQ(ReadFile((dir_ / "empty").string()), "");
  std::string error;
  EXPECT_EQ(ReadFile((dir_ / "missing").string(), &error), std::nullopt);
  EXPECT_EQ(error, "No such file or directory");
  EXPECT_EQ(ReadFile(dir_.string(), &error), std::nullopt);
  EXPECT_EQ(error, "Is a directory");
  // A /proc file says its size is 0: it is read to its end all the same.
  const auto self = ReadFile("/proc/self/status");
  ASSERT_TRUE(self.has_value());
  EXPECT_NE(self->find("Pid:"), std::string::npos);
}

TEST_F(Files, ReadStopsOnceMoreThanTheLimitIsRead) {
  std::ofstream(dir_ / "big") << std::string(1 << 20, 'x');
  const auto text = ReadFile((dir_ / "big").string(), nullptr, 1000);
  ASSERT_TRUE(text.has_value());
  EXPECT_GT(text->size(), 1000u);
  EXPECT_LT(text->size(), size_t{1} << 20);
  // A device without end is read up to the limit, and a FIFO without a writer does not wait.
  EXPECT_GT(ReadFile("/dev/zero", nullptr, 1000)->size(), 1000u);
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(ReadFile(fifo.string()), "");
}

TEST_F(Files, ReadFirstLineTrimsTheLineEnd) {
  std::ofstream(dir_ / "governor") << "performance \r\nsecond\n";
  EXPECT_EQ(ReadFirstLine((dir_ / "governor").string()), "performance");
  std::ofstream(dir_ / "no_end") << "1";
  EXPECT_EQ(ReadFirstLine((dir_ / "no_end").string()), "1");
  EXPECT_EQ(ReadFirstLine((dir_ / "missing").string()), "");
  EXPECT_EQ(ReadFirstLine("/proc/sys/kernel/random/boot_id").size(), 36u);  // a UUID
}

// A second lock on the file waits until the first is gone (flock locks of two open files).
TEST_F(Files, FileLockWaitsForTheHolder) {
  const std::string path = (dir_ / "package.lock").string();
  std::atomic<bool> second_has_it{false};
  std::optional<std::thread> second;
  {
    FileLock first(path);
    second.emplace([&] {
      FileLock lock(path);
      second_has_it = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(second_has_it);
  }
  second->join();
  EXPECT_TRUE(second_has_it);
  EXPECT_TRUE(fs::exists(path));  // the file stays
}

TEST_F(Files, MakeTempDirMakesAPrivateFolderInTmpdirOrSaysWhy) {
  const std::string before = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "";
  ::setenv("TMPDIR", dir_.c_str(), 1);
  EXPECT_EQ(TempDir(), dir_.string());
  const auto a = MakeTempDir("runx-x-"), b = MakeTempDir("runx-x-");
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(fs::path(*a).parent_path(), dir_);
  EXPECT_EQ(fs::path(*a).filename().string().rfind("runx-x-", 0), 0u);
  EXPECT_EQ(fs::status(*a).permissions(), fs::perms::owner_all);
  ::setenv("TMPDIR", (dir_ / "missing").c_str(), 1);
  std::string why;
  EXPECT_FALSE(MakeTempDir("runx-x-", &why));
  EXPECT_EQ(why, "cannot create a folder in '" + (dir_ / "missing").string() + "': No such file or directory");
  ::setenv("TMPDIR", "", 1);
  EXPECT_EQ(TempDir(), "/tmp");
  ::setenv("TMPDIR", before.c_str(), 1);
}

}  // namespace
}  // namespace runx::base
