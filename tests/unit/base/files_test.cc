#include "base/files.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

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

}  // namespace
}  // namespace runx::base
