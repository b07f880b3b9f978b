// A file and its sidecar made by a program whole or not at all (base/file_pair.h), with /bin/sh
// scripts standing in for compile_step.py.
#include "base/file_pair.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/remove_tree.h"

namespace runx::base {
namespace {
namespace fs = std::filesystem;
using Outcome = FilePairResult::Outcome;

class FilePair : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("runx-file-pair-" + std::to_string(getpid()));
    RemoveTree(dir_.string());
    path_ = (dir_ / "sub" / "step.pt2").string();
  }
  void TearDown() override { RemoveTree(dir_.string()); }
  // sh -c SCRIPT: the partial path is $1 (sh's $0 is "maker").
  FilePairRequest Sh(const std::string& script, bool capture = false) const {
    return {path_, {"/bin/sh", "-c", script, "maker"}, capture};
  }
  // Nothing but the lock file is left in the folder.
  std::vector<std::string> Left() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(fs::path(path_).parent_path())) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
  std::string path_;
};

constexpr const char* kWritesBoth = "echo package > \"$1\" && echo '{}' > \"$1.json\"";

TEST_F(FilePair, MadeWholeAfterTheCheckSawThePartialPair) {
  std::vector<std::string> started;
  std::string checked;
  const auto r = MakeFilePair(
      Sh(kWritesBoth), [&](const auto& argv) { started = argv; },
      [&](const std::string& partial) {
        checked = partial;
        return FilePairPresent(partial) && !FilePairPresent(path_);
      });
  EXPECT_EQ(r.outcome, Outcome::kMade);
  EXPECT_TRUE(r.made());
  EXPECT_EQ(checked, r.partial);
  ASSERT_EQ(started.size(), 5u);
  EXPECT_EQ(started.back(), r.partial);  // the partial path comes last
  EXPECT_NE(r.partial.find("/sub/.partial-"), std::string::npos) << r.partial;
  EXPECT_TRUE(FilePairPresent(path_));
  EXPECT_EQ(Left(), (std::vector<std::string>{"step.pt2", "step.pt2.json", "step.pt2.lock"}));
  // There now: the next maker runs nothing.
  bool ran = false;
  const auto again = MakeFilePair(
      Sh("exit 9"), [&](const auto&) { ran = true; }, nullptr);
  EXPECT_EQ(again.outcome, Outcome::kMadeMeanwhile);
  EXPECT_FALSE(ran);
}

TEST_F(FilePair, ARejectedPairIsNotKept) {
  const auto r = MakeFilePair(Sh(kWritesBoth), nullptr, [](const std::string&) { return false; });
  EXPECT_EQ(r.outcome, Outcome::kRejected);
  EXPECT_FALSE(r.made());
  EXPECT_EQ(Left(), (std::vector<std::string>{"step.pt2.lock"}));
}

TEST_F(FilePair, AFailingProgramKeepsNothingAndItsStderrIsKeptWhenCaptured) {
  const auto r = MakeFilePair(Sh(std::string(kWritesBoth) + " && echo 'cannot trace: reason' >&2 && exit 2", true),
                              nullptr, [](const std::string&) { return true; });
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "cannot trace: reason\n");
  EXPECT_EQ(Left(), (std::vector<std::string>{"step.pt2.lock"}));
}

TEST_F(FilePair, HalfAPairIsNoOutput) {
  const auto r = MakeFilePair(Sh("echo package > \"$1\""), nullptr, nullptr);  // no sidecar
  EXPECT_EQ(r.outcome, Outcome::kNoOutput);
  EXPECT_EQ(Left(), (std::vector<std::string>{"step.pt2.lock"}));
}

TEST_F(FilePair, AProgramThatCannotStartSaysWhy) {
  const auto r = MakeFilePair({path_, {"/nonexistent/python3"}, true}, nullptr, nullptr);
  EXPECT_EQ(r.outcome, Outcome::kCannotRun);
  EXPECT_FALSE(r.error.empty());
  const auto spawned = MakeFilePair({path_, {"/nonexistent/python3"}, false}, nullptr, nullptr);
  EXPECT_EQ(spawned.outcome, Outcome::kCannotRun);
  EXPECT_FALSE(spawned.error.empty());
}

}  // namespace
}  // namespace runx::base
