// base::SuggestName: the speller of command-line names (commands, options, experiments).
#include <gtest/gtest.h>

#include "base/spelling.h"

namespace runx::base {
namespace {

const std::vector<std::string> kCommands = {"run", "validate", "plan", "query", "compare", "history", "report"};

TEST(SuggestName, AUniquePrefixIsTheName) {
  EXPECT_EQ(SuggestName("hist", kCommands), "history");
  EXPECT_EQ(SuggestName("val", kCommands), "validate");
  EXPECT_EQ(SuggestName("r", kCommands), "");  // too short to be a prefix; and no close name
}

TEST(SuggestName, AnAmbiguousPrefixFallsBackToTheClosestName) {
  EXPECT_EQ(SuggestName("re", {"report", "resume"}), "");
  EXPECT_EQ(SuggestName("--re", {"--report", "--rep"}), "--rep");  // one edit from --rep
}

TEST(SuggestName, TyposAreOneOrTwoEdits) {
  EXPECT_EQ(SuggestName("comapre", kCommands), "compare");
  EXPECT_EQ(SuggestName("--treshold", {"--threshold", "--format", "--db"}), "--threshold");
  EXPECT_EQ(SuggestName("quikstart", {"quickstart", "gpt-text"}), "quickstart");
  EXPECT_EQ(SuggestName("xyzzy", kCommands), "");
}

}  // namespace
}  // namespace runx::base
