#include "base/sha256.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <gtest/gtest.h>

namespace runx::base {
namespace {
namespace fs = std::filesystem;

TEST(Sha256, HexMatchesKnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Every byte, a NUL included.
  EXPECT_EQ(Sha256Hex(std::string("a\0b", 3)), "59b271ae1bbcb1d31d41929817f4b16fb439eb4f31520b5ad1d5ce98920a7138");
}

TEST(Sha256, OfFileHashesItsContent) {
  const fs::path dir = fs::temp_directory_path() / ("runx_base_sha_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "abc") << "abc";
  EXPECT_EQ(Sha256OfFile((dir / "abc").string()), Sha256Hex("abc"));
  // Only a regular file is hashed: a FIFO would wait for a writer, a device never ends.
  const std::string fifo = (dir / "f").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  try {
    Sha256OfFile(fifo);
    ADD_FAILURE() << "a FIFO was hashed";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "'" + fifo + "' is a FIFO, not a regular file");
  }
  EXPECT_THROW(Sha256OfFile("/dev/zero"), std::runtime_error);
  try {
    Sha256OfFile((dir / "missing").string());
    ADD_FAILURE() << "a missing file was hashed";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read '" + (dir / "missing").string() + "': No such file or directory");
  }
  fs::remove(fifo);
  fs::remove(dir / "abc");
  fs::remove(dir);
}

}  // namespace
}  // namespace runx::base
