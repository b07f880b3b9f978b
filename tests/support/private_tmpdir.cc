// Every test process gets a TMPDIR of its own (a fresh folder under the inherited one, removed when
// the process exits), so the fixed folder names the tests use (temp_directory_path()/runx_<suite>_<test>)
// and everything runx itself puts in TMPDIR (a trial's folder, its locks) belong to this process:
// two test suites on one machine (CI beside a helper's branch, ctest -j) cannot meet in /tmp.
// Linked into every test executable (tests/CMakeLists.txt); it runs before main, so before gtest.
#include <stdlib.h>

#include <cstdlib>
#include <string>

#include "base/files.h"
#include "base/remove_tree.h"

namespace {

class PrivateTmpdir {
 public:
  PrivateTmpdir() {
    const auto dir = runx::base::MakeTempDir("runx-test-");  // under the inherited TMPDIR
    if (!dir) return;                                        // an unwritable TMPDIR: keep it, the tests will say so
    dir_ = *dir;
    setenv("TMPDIR", dir_.c_str(), 1);
  }
  ~PrivateTmpdir() {
    if (!dir_.empty()) runx::base::RemoveTree(dir_);
  }
  PrivateTmpdir(const PrivateTmpdir&) = delete;
  PrivateTmpdir& operator=(const PrivateTmpdir&) = delete;

 private:
  std::string dir_;
};

const PrivateTmpdir private_tmpdir;

}  // namespace
