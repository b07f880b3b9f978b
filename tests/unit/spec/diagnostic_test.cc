// Diagnostic::Render, SpecError::Render, DidYouMean.
#include <gtest/gtest.h>

#include "spec/spec.h"

namespace runx::spec {
namespace {

Diagnostic Make(int line, int column, std::string source, std::vector<std::string> notes = {}) {
  Diagnostic d;
  d.file = "experiments/bad.yaml";
  d.line = line;
  d.column = column;
  d.message = "unknown model 'resnt50'";
  d.source_line = std::move(source);
  d.notes = std::move(notes);
  return d;
}

TEST(Diagnostic, RendersLocationSourceCaretAndNotes) {
  const auto d =
      Make(7, 9, "  name: resnt50", {"expected one of 'mlp', 'cnn', 'resnet18', 'resnet50'; did you mean 'resnet50'?"});
  EXPECT_EQ(d.Render(),
            "experiments/bad.yaml:7:9: error: unknown model 'resnt50'\n"
            "    7 |   name: resnt50\n"
            "      |         ^\n"
            "note: expected one of 'mlp', 'cnn', 'resnet18', 'resnet50'; did you mean 'resnet50'?\n");
}

TEST(Diagnostic, WithoutPositionHasNoSourceLine) {
  Diagnostic d;
  d.file = "--set data.batch_size=-1";
  d.message = "'data.batch_size' must be >= 1, got -1";
  EXPECT_EQ(d.Render(), "--set data.batch_size=-1: error: 'data.batch_size' must be >= 1, got -1\n");
}

TEST(Diagnostic, PositionWithoutSourceTextShowsOnlyTheLocation) {
  EXPECT_EQ(Make(3, 1, "").Render(), "experiments/bad.yaml:3:1: error: unknown model 'resnt50'\n");
}

TEST(Diagnostic, CaretFollowsTabsAndMultiByteCharacters) {
  // yaml-cpp columns count bytes; 'é' is two of them but one column on screen.
  EXPECT_EQ(Make(2, 6, "\té: x").Render(),
            "experiments/bad.yaml:2:6: error: unknown model 'resnt50'\n"
            "    2 | \té: x\n"
            "      | \t   ^\n");
}

TEST(Diagnostic, LongLinesAreCutAroundTheCaret) {
  const std::string line = "k: " + std::string(300, 'a') + "X" + std::string(300, 'b');
  const std::string out = Make(1, 304, line).Render();
  EXPECT_EQ(out,
            "experiments/bad.yaml:1:304: error: unknown model 'resnt50'\n"
            "    1 | ..." +
                std::string(60, 'a') + "X" + std::string(59, 'b') +
                "...\n"
                "      |    " +
                std::string(60, ' ') + "^\n");
}

TEST(Diagnostic, ControlCharactersInTheSourceAreNotPrinted) {
  EXPECT_EQ(Make(1, 4, "a: \x1b[31m").Render(),
            "experiments/bad.yaml:1:4: error: unknown model 'resnt50'\n"
            "    1 | a: ?[31m\n"
            "      |    ^\n");
}

TEST(SpecError, RendersEveryDiagnosticThenACount) {
  Diagnostic a = Make(2, 1, "");
  Diagnostic b;
  b.file = "--set device=gpu";
  b.message = "unknown device 'gpu'";
  const SpecError two({a, b}, "experiments/bad.yaml");
  EXPECT_EQ(two.Render(),
            "experiments/bad.yaml:2:1: error: unknown model 'resnt50'\n"
            "--set device=gpu: error: unknown device 'gpu'\n"
            "2 errors in experiments/bad.yaml\n");
  EXPECT_EQ(std::string(two.what()), two.Render());
  const SpecError one({b, a});  // the count names the file, not the override
  EXPECT_EQ(one.path(), "experiments/bad.yaml");
  EXPECT_EQ(SpecError({a}).Render(),
            "experiments/bad.yaml:2:1: error: unknown model 'resnt50'\n1 error in experiments/bad.yaml\n");
}

TEST(DidYouMean, FindsCloseNames) {
  EXPECT_EQ(DidYouMean("resnt50", {"mlp", "cnn", "resnet18", "resnet50"}), "resnet50");
  EXPECT_EQ(DidYouMean("chanels_last", {"amp", "channels_last"}), "channels_last");
  EXPECT_EQ(DidYouMean("batchsize", {"batch_size", "shape", "source"}), "batch_size");
  EXPECT_EQ(DidYouMean("mpl", {"mlp", "cnn"}), "mlp");                      // transposition: one edit
  EXPECT_EQ(DidYouMean("ResNet50", {"resnet18", "resnet50"}), "resnet50");  // case only
  EXPECT_EQ(DidYouMean("cdua", {"auto", "cpu", "mps", "cuda"}), "cuda");
}

TEST(DidYouMean, StaysQuietWhenNothingIsClose) {
  EXPECT_EQ(DidYouMean("imagenet", {"synthetic", "fashion-mnist"}), "");
  EXPECT_EQ(DidYouMean("ab", {"xy"}), "");  // short words tolerate one edit
  EXPECT_EQ(DidYouMean("a", {"b"}), "");    // never replace the whole word
  EXPECT_EQ(DidYouMean("", {"a"}), "");
  EXPECT_EQ(DidYouMean("anything", {}), "");
  EXPECT_EQ(DidYouMean(std::string(100000, 'a'), {"a"}), "");  // bounded cost
}

}  // namespace
}  // namespace runx::spec
