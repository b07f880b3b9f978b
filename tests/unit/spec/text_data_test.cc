// Text data's files (which a path names, how they are read) and how their tokens split.
#include "spec/text_data.h"

#include <zlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace runx::spec {
namespace {

namespace fs = std::filesystem;

class TextFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_text_files_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::string WriteGzip(const std::string& name, const std::string& text) {
    const auto p = (dir_ / name).string();
    gzFile f = gzopen(p.c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
    return p;
  }
  static std::string ReadAll(const TextFile& f) {
    std::string out;
    ReadText(f, [&](const char* p, size_t n) { out.append(p, n); });
    return out;
  }
  fs::path dir_;
};

TEST_F(TextFiles, AFileIsTakenWhateverItHolds) {
  const auto path = Write("one.bin", std::string("a\0b", 3));
  const auto files = ListTextFiles(path);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, path);
  EXPECT_FALSE(files[0].gzip);
  EXPECT_EQ(files[0].bytes, 3);
  EXPECT_EQ(ReadAll(files[0]), std::string("a\0b", 3));
}

TEST_F(TextFiles, AFolderGivesItsTextFilesByNameEachOnce) {
  Write("b.txt", "bee\n");
  Write("a.txt", "ay\n");
  Write("a.dat", std::string("\0\0\0\x02", 4));       // binary: fortunes' strfile index
  fs::create_symlink(dir_ / "a.txt", dir_ / "a.u8");  // a second name of a.txt
  fs::create_directories(dir_ / "sub");
  Write("sub/c.txt", "not read\n");
  WriteGzip("c.txt.gz", "sea\n");
  const auto files = ListTextFiles(dir_.string());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(fs::path(files[0].path).filename(), "a.txt");
  EXPECT_EQ(fs::path(files[1].path).filename(), "b.txt");
  EXPECT_EQ(fs::path(files[2].path).filename(), "c.txt.gz");
  EXPECT_TRUE(files[2].gzip);
  EXPECT_FALSE(files[2].bytes.has_value());  // the gzip trailer holds the size only modulo 2^32
  EXPECT_EQ(ReadAll(files[2]), "sea\n");
  EXPECT_FALSE(TotalBytes(files).has_value());
  EXPECT_EQ(TotalBytes({files[0], files[1]}), 7);
}

TEST_F(TextFiles, ALinkToAFileElsewhereIsTaken) {
  const auto target = Write("elsewhere.txt", "far\n");
  fs::create_directories(dir_ / "corpus");
  fs::create_symlink(target, dir_ / "corpus" / "link.txt");
  const auto files = ListTextFiles((dir_ / "corpus").string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(ReadAll(files[0]), "far\n");
}

TEST_F(TextFiles, WhatCannotBeUsedIsNamed) {
  const std::string missing = (dir_ / "missing.txt").string();
  try {
    ListTextFiles(missing);
    FAIL();
  } catch (const TextDataError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read '" + missing + "': No such file or directory");
  }
  Write("only.dat", std::string("\0\x01", 2));
  try {
    ListTextFiles(dir_.string());
    FAIL();
  } catch (const TextDataError& e) {
    EXPECT_EQ(std::string(e.what()), "folder '" + dir_.string() +
                                         "' holds no text files (binary files, with a NUL byte in their first 8 KiB, "
                                         "are left out)");
  }
}

TEST(TextSplit, TheLastFractionIsHeldOut) {
  EXPECT_EQ(SplitTokens(1000, 0.1).train, 900);
  EXPECT_EQ(SplitTokens(1000, 0.1).val, 100);
  EXPECT_EQ(SplitTokens(1005, 0.1).val, 100);  // floor
  EXPECT_EQ(SplitTokens(1005, 0.1).train, 905);
  EXPECT_EQ(SplitTokens(7, 0.0).train, 7);
  EXPECT_EQ(SplitTokens(7, 0.0).val, 0);
}

TEST(TextSplit, ABlockNeedsOneTokenMoreThanItsLength) {
  EXPECT_EQ(BlockCount(8, 8), 0);  // 8 inputs need a 9th token as the last target
  EXPECT_EQ(BlockCount(9, 8), 1);
  EXPECT_EQ(BlockCount(16, 8), 1);  // blocks [0, 8) and [8, 16) would need token 16
  EXPECT_EQ(BlockCount(17, 8), 2);
  EXPECT_EQ(BlockCount(0, 8), 0);
}

}  // namespace
}  // namespace runx::spec
