// Issues placed in the file, or at the override that set the value.
#include <gtest/gtest.h>

#include "spec/locate.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

TEST(Locate, AtTheValueTheKeyOrTheOverride) {
  const Source source("x.yaml", "a: 1\nb:\r\n  c: 2\n");
  SourceMap origins;
  origins.Set("", {{1, 1}, {}, -1});
  origins.Set("/b/c", {{3, 6}, {3, 3}, -1});
  origins.Set("/d", {{}, {}, 0});
  const std::vector<Override> overrides = Sets({"d=5"});
  std::vector<Diagnostic> d;
  d.push_back(FromIssue(source, origins, overrides, {"/b/c", false, "bad value", {"a note"}}));
  d.push_back(FromIssue(source, origins, overrides, {"/b/c", true, "bad key", {}}));
  d.push_back(FromIssue(source, origins, overrides, {"/b/c/e", false, "under it", {}}));
  d.push_back(FromIssue(source, origins, overrides, {"/d", false, "overridden", {}}));
  source.AddSourceLines(&d);
  std::string out;
  for (const auto& x : d) out += x.Render();
  EXPECT_EQ(out,
            "x.yaml:3:6: error: bad value\n"
            "    3 |   c: 2\n"
            "      |      ^\n"
            "note: a note\n"
            "x.yaml:3:3: error: bad key\n"
            "    3 |   c: 2\n"
            "      |   ^\n"
            "x.yaml:3:6: error: under it\n"
            "    3 |   c: 2\n"
            "      |      ^\n"
            "--set d=5: error: overridden\n");
}

}  // namespace
}  // namespace runx::spec::test
