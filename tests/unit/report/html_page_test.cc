// The page of `runx report` and its chart library: escaping, the embedded chart data, the
// environment table, and finding Debian's Vega (with fake module files in a temp dir).
#include "report/html.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "html_fixture.h"
#include "report/vega_library.h"
#include "test_support.h"

namespace runx::report {
namespace {

using json = nlohmann::ordered_json;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlEscape, TextAndScripts) {
  EXPECT_EQ(EscapeHtml("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  EXPECT_EQ(EscapeForScript("x = '</script><b>'; y = '</SCRIPT>'; <!-- z; </scrip; a < b"),
            "x = '<\\/script><b>'; y = '<\\/SCRIPT>'; <\\!-- z; </scrip; a < b");
  EXPECT_EQ(ScriptJson(json{{"label", "</script><!--x"}}), R"({"label":"\u003c/script>\u003c!--x"})");
  EXPECT_EQ(json::parse(ScriptJson(json{{"label", "</script>"}}))["label"], "</script>");
}

TEST(HtmlTable, RightAlignedColumnsAndEscapedCells) {
  TextTable t;
  t.headers = {"variant", "ms"};
  t.right = {false, true};
  t.rows = {{"<b>", "1.5"}};
  EXPECT_EQ(HtmlTable(t, "x"),
            "<table class=\"x\"><thead><tr><th>variant</th><th class=\"num\">ms</th></tr></thead><tbody>\n"
            "<tr><td>&lt;b&gt;</td><td class=\"num\">1.5</td></tr>\n</tbody></table>\n");
  const auto marked = [](size_t row, size_t column) { return row == 0 && column == 1 ? "slower" : ""; };
  EXPECT_NE(HtmlTable(t, "", marked).find("<td class=\"num slower\">1.5</td>"), std::string::npos);
}

class HtmlPage : public store::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = PathOf("runx.db");
    store::testing::FillExampleStore(db_);
    testing::AddRun4(db_);
  }
  std::string db_;
};

TEST_F(HtmlPage, OnePageWithEveryChartAndTable) {
  store::Store store = store::Store::Open(db_);
  const HtmlReport report = BuildHtmlReport(store, {4}, {});
  const std::string page = RenderHtmlReport(report, {"runx test", db_}, "/* the library */");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_EQ(Count(page, "/* the library */"), 1u);
  EXPECT_EQ(Count(page, "<script"), 4u);  // errors, Vega, the charts' data, drawing
  EXPECT_EQ(Count(page, "</script>"), 4u);
  EXPECT_NE(page.find("<title>runx report: mlp_amp, run 4</title>"), std::string::npos);
  // The charts' data: every chart of the page, each with a figure to draw into.
  const std::string open = "<script type=\"application/json\" id=\"runx-charts\">";
  const size_t start = page.find(open);
  ASSERT_NE(start, std::string::npos);
  const size_t end = page.find("</script>", start);
  const json charts = json::parse(page.substr(start + open.size(), end - start - open.size()));
  std::vector<std::string> ids;
  for (const json& c : charts) {
    ids.push_back(c["id"]);
    EXPECT_EQ(c["spec"]["$schema"], "https://vega.github.io/schema/vega/v5.json");
    EXPECT_EQ(Count(page, "<figure id=\"" + c["id"].get<std::string>() + "\""), 1u) << c["id"];
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"run-4-speedup", "run-4-steps", "run-4-loss", "run-4-drift", "run-4-memory",
                                           "run-4-frontier", "run-4-frontier-memory", "history-mlp_amp"}));
  // The tables: variants, environment (noise keys marked), history.
  EXPECT_NE(page.find("<table class=\"variants\">"), std::string::npos);
  EXPECT_NE(page.find("<tr class=\"noise\"><td>noise.cpu_governor</td><td>performance</td></tr>"), std::string::npos);
  EXPECT_EQ(page.find("bootstrap seed"), std::string::npos);
  EXPECT_NE(page.find("<table class=\"history\">"), std::string::npos);
  EXPECT_NE(page.find("-22."), std::string::npos);
  EXPECT_EQ(page.find("▼ -22."), std::string::npos);  // one or two processes a run: no verdict
  EXPECT_NE(page.find("<pre id=\"runx-test-result\" hidden></pre>"), std::string::npos);
  // The same store gives the same page.
  EXPECT_EQ(page, RenderHtmlReport(BuildHtmlReport(store, {4}, {}), {"runx test", db_}, "/* the library */"));
}

TEST_F(HtmlPage, AbsentChartsAreSaidSo) {
  store::Store store = store::Store::Open(db_);
  const std::string page = RenderHtmlReport(BuildHtmlReport(store, {3}, {}), {"runx test", db_}, "");
  EXPECT_EQ(page.find("frontier"), std::string::npos);  // no auto_batch: no chart, no word
  EXPECT_EQ(page.find("No memory figures"), std::string::npos);
  store::RunOverview run;
  run.id = 9;
  HtmlReport empty;
  empty.runs.push_back({run});
  const std::string bare = RenderHtmlReport(empty, {"runx test", db_}, "");
  EXPECT_NE(bare.find("the run has no trial"), std::string::npos);
  EXPECT_NE(bare.find("No speedup"), std::string::npos);
  EXPECT_NE(bare.find("No loss curve"), std::string::npos);
  EXPECT_NE(bare.find("No memory figures"), std::string::npos);
}

// The text of every cell of each body row of the first <table class="CLASS"> of `page`, unescaped.
std::vector<std::vector<std::string>> TableRows(const std::string& page, const std::string& css_class) {
  const auto unescape = [](std::string text) {
    for (const auto& [entity, c] : {std::pair{"&lt;", "<"}, std::pair{"&gt;", ">"}, std::pair{"&quot;", "\""},
                                    std::pair{"&#39;", "'"}, std::pair{"&amp;", "&"}}) {
      for (size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1)) {
        text.replace(at, std::string(entity).size(), c);
      }
    }
    return text;
  };
  std::vector<std::vector<std::string>> rows;
  const size_t start = page.find("<table class=\"" + css_class + "\">");
  if (start == std::string::npos) return rows;
  const size_t end = page.find("</table>", start);
  size_t at = page.find("<tbody>", start);
  while ((at = page.find("<tr>", at)) != std::string::npos && at < end) {
    const size_t row_end = page.find("</tr>", at);
    std::vector<std::string> cells;
    for (size_t cell = page.find("<td", at); cell != std::string::npos && cell < row_end;
         cell = page.find("<td", cell + 1)) {
      const size_t open = page.find('>', cell) + 1;
      cells.push_back(unescape(page.substr(open, page.find("</td>", open) - open)));
    }
    rows.push_back(cells);
    at = row_end;
  }
  return rows;
}

// "class: text" of each body cell of the first <table class="CLASS"> of `page` that has a class
// besides "num".
std::vector<std::string> ColouredCells(const std::string& page, const std::string& css_class) {
  std::vector<std::string> out;
  const size_t start = page.find("<table class=\"" + css_class + "\">");
  if (start == std::string::npos) return out;
  const size_t end = page.find("</table>", start);
  for (size_t at = page.find("<td class=\"", start); at < end; at = page.find("<td class=\"", at + 1)) {
    const size_t name = at + 11;
    const std::string classes = page.substr(name, page.find('"', name) - name);
    if (classes == "num") continue;
    const size_t open = page.find('>', at) + 1;
    out.push_back(classes + ": " + page.substr(open, page.find("</td>", open) - open));
  }
  return out;
}

// The cells of the rows of a markdown table in `text` (RenderComparison's), header and rule left out.
std::vector<std::vector<std::string>> MarkdownRows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  int seen = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| ", 0) != 0 || seen++ < 2) continue;
    std::vector<std::string> cells;
    for (size_t at = 2; at < line.size();) {
      const size_t bar = line.find(" |", at);
      cells.push_back(line.substr(at, bar - at));
      at = bar + 3;
    }
    rows.push_back(cells);
  }
  return rows;
}

// `runx report A B`: first of all what `runx compare A B` says, computed as it computes it (both
// sides' trials in the spread book, the report's threshold), the same rows and lines.
TEST_F(HtmlPage, TwoRunsBeginWithCompareTable) {
  testing::AddSteadyRuns(db_);
  store::Store store = store::Store::Open(db_);
  for (const auto& [a, b] : {std::pair<int64_t, int64_t>{1, 2}, std::pair<int64_t, int64_t>{8, 9}}) {
    HtmlOptions options;
    options.threshold = 0.03;
    const std::string page = RenderHtmlReport(BuildHtmlReport(store, {a, b}, options), {"runx test", db_}, "");
    const CompareSide side_a{a, store.ReadRunTrials(a), std::nullopt};
    const CompareSide side_b{b, store.ReadRunTrials(b), std::nullopt};
    std::vector<store::RunTrial> both = side_a.trials;
    both.insert(both.end(), side_b.trials.begin(), side_b.trials.end());
    CompareOptions compare;
    compare.threshold = 0.03;
    const Comparison c = Compare(side_a, side_b, compare, SpreadBook::Read(store, both));
    const std::string text = RenderComparison(c, store::ReadRunOverview(store, a), store::ReadRunOverview(store, b),
                                              OutputFormat::kMarkdown, Gate::kOff);
    const auto expected = MarkdownRows(text);
    ASSERT_FALSE(expected.empty()) << text;
    EXPECT_EQ(TableRows(page, "comparison"), expected) << text;
    // Every line compare prints under its table (run 1 against 2: fp16 only in A, inconclusive
    // verdicts), and the threshold it used.
    std::istringstream under(text.substr(text.rfind("|\n") + 2));
    std::string remarks;
    for (std::string line; std::getline(under, line);) {
      if (line.rfind("- ", 0) == 0) remarks += "<li>" + EscapeHtml(line.substr(2)) + "</li>";
    }
    if (a == 1) {
      EXPECT_NE(remarks.find("<li>only in A: fp16</li><li>inconclusive: baseline: "), std::string::npos) << text;
    }
    EXPECT_NE(page.find(remarks.empty() ? "</table>" : "<ul class=\"remarks\">" + remarks + "</ul>"), std::string::npos)
        << text;
    EXPECT_NE(page.find("±3%"), std::string::npos);
    // Before the runs' own sections, and first in the navigation.
    const size_t section = page.find("<section id=\"comparison\">");
    ASSERT_NE(section, std::string::npos);
    EXPECT_LT(section, page.find("<section id=\"run-"));
    EXPECT_NE(page.find(fmt::format("<h2>Run {} against run {}</h2>", b, a)), std::string::npos);
    EXPECT_NE(page.find(fmt::format("<nav><a href=\"#comparison\">run {} against run {}</a>", b, a)),
              std::string::npos);
  }
}

// A verdict cell is coloured only for faster and slower.
TEST_F(HtmlPage, OnlyVerdictsAreColouredInTheComparison) {
  testing::AddSteadyRuns(db_);
  store::Store store = store::Store::Open(db_);
  const auto page = [&](int64_t a, int64_t b) {
    return RenderHtmlReport(BuildHtmlReport(store, {a, b}, {}), {"runx test", db_}, "");
  };
  // 61 ms, then 80 ms, after runs that agree: slower; then back to 60 ms: faster.
  EXPECT_EQ(ColouredCells(page(8, 9), "comparison"), std::vector<std::string>{"slower: slower"});
  EXPECT_EQ(ColouredCells(page(9, 10), "comparison"), std::vector<std::string>{"faster: faster"});
  // mlp_amp 1 and 2: inconclusive, in plain cells.
  const std::string inconclusive = page(1, 2);
  const auto rows = TableRows(inconclusive, "comparison");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][5], "inconclusive");
  EXPECT_EQ(rows[1][5], "inconclusive");
  EXPECT_EQ(ColouredCells(inconclusive, "comparison"), std::vector<std::string>{});
}

TEST_F(HtmlPage, OneVariantHasNothingToCompare) {
  testing::AddSteadyRuns(db_);
  store::Store store = store::Store::Open(db_);
  const std::string page =
      RenderHtmlReport(BuildHtmlReport(store, {testing::kSteadyFirst}, {}), {"runx test", db_}, "");
  EXPECT_NE(page.find("<p class=\"absent\">One variant: nothing to compare"), std::string::npos);
  EXPECT_EQ(page.find("id=\"run-5-speedup\""), std::string::npos);
  EXPECT_EQ(page.find("No speedup"), std::string::npos);
  EXPECT_EQ(page.find("<section id=\"comparison\">"), std::string::npos);  // one run: no comparison
}

TEST_F(HtmlPage, NamesAreEscapedEverywhere) {
  {
    store::Store store = store::Store::Open(db_);
    const int64_t exp = store.AddExperiment("x</script><b>", "x.yaml", "name: x\n", "sha-x");
    store::RunInfo info;
    info.experiment_id = exp;
    info.started_at = "2026-12-05T10:00:00Z";
    info.host = "<host>";
    const int64_t run = store.BeginRun(info);
    store.RecordTrial(store::testing::MakeTrial(run, 0, {"</script>", true, 0, "ok", "", 100, 10}));
    store.EndRun(run, RunStatus::kOk, "2026-12-05T11:00:00Z");
  }
  store::Store store = store::Store::Open(db_);
  const std::string page = RenderHtmlReport(BuildHtmlReport(store, {5}, {}), {"runx test", db_}, "");
  EXPECT_EQ(Count(page, "</script>"), 4u);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_NE(page.find("Run 5 of x&lt;/script&gt;&lt;b&gt;"), std::string::npos);
  EXPECT_NE(page.find("\\u003c/script>"), std::string::npos);
  EXPECT_NE(page.find("&lt;host&gt;"), std::string::npos);
}

TEST(HtmlEnvironment, RunFieldsThenItsKeys) {
  store::RunOverview run;
  run.id = 3;
  run.experiment = "e";
  run.git_sha = "abcdef123456";
  run.git_dirty = true;
  run.build_type = "Release";
  run.environment = {{"noise.load_average", "0.1 0.2 0.3"}, {"cpu", "x86"}};
  const auto rows = EnvironmentRows(run);
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::pair<std::string, std::string>{"run", "3"}));
  const auto has = [&](const std::string& k, const std::string& v) {
    return std::find(rows.begin(), rows.end(), std::pair<std::string, std::string>{k, v}) != rows.end();
  };
  EXPECT_TRUE(has("build", "abcdef1-dirty Release"));
  EXPECT_TRUE(has("tag", "-"));
  EXPECT_TRUE(has("git dirty", "yes"));
  EXPECT_EQ(rows[rows.size() - 2].first, "cpu");  // the environment keys last, in key order
  EXPECT_EQ(rows.back().first, "noise.load_average");
}

class VegaLibrary : public store::testing::TempDirTest {
 protected:
  // Writes every module file the report needs under <temp>/js, each `text` plus a source map line.
  void WriteModules(const std::string& text, bool minified = true) {
    for (const VegaModule& m : VegaModules()) {
      const std::string file = minified || m.plain.empty() ? m.file : m.plain;
      const std::filesystem::path p = dir() / "js" / file;
      std::filesystem::create_directories(p.parent_path());
      std::ofstream(p) << text << " /* " << m.name << " */\n//# sourceMappingURL=" << file << ".map\n";
    }
  }
  std::string Js() const { return (dir() / "js").string(); }
};

TEST_F(VegaLibrary, EveryModuleBecomesALoaderModule) {
  WriteModules("exports.x = '</script>';");
  const std::string script = LoadVegaScript({PathOf("nothing-here"), Js()});
  for (const VegaModule& m : VegaModules()) {
    EXPECT_EQ(Count(script, "runxDefine('" + m.name + "', function (module, exports, require) {\n"), 1u) << m.name;
    EXPECT_EQ(Count(script, "/* " + m.name + " */"), 1u) << m.name;
  }
  EXPECT_EQ(script.find("sourceMappingURL"), std::string::npos);
  EXPECT_EQ(script.find("</script>"), std::string::npos);
  EXPECT_NE(script.find("exports.x = '<\\/script>';"), std::string::npos);
  EXPECT_NE(script.find("var vega = "), std::string::npos);
  EXPECT_NE(script.find("runxRequire('vega-parser').parse"), std::string::npos);
}

TEST_F(VegaLibrary, PlainFilesWhenTheMinifiedAreMissing) {
  WriteModules("exports.y = 1;", false);
  const std::string script = LoadVegaScript({Js()});
  EXPECT_EQ(Count(script, "exports.y = 1;"), VegaModules().size());
}

TEST_F(VegaLibrary, AMissingModuleNamesThePackage) {
  WriteModules("exports.z = 1;");
  std::filesystem::remove(dir() / "js" / "vega" / "vega-view.min.js");
  std::filesystem::remove(dir() / "js" / "vega" / "vega-view.js");
  try {
    LoadVegaScript({PathOf("empty"), Js()});
    FAIL() << "no error";
  } catch (const ChartLibraryError& e) {
    EXPECT_EQ(std::string(e.what()),
              "the charts need Vega 5 from the Debian package libjs-vega, and no folder of " + PathOf("empty") + ", " +
                  Js() +
                  " holds 'vega/vega-view.min.js'; install it with: sudo apt-get install libjs-vega (or set "
                  "RUNX_JAVASCRIPT_DIR to a folder holding vega/ and topojson-client/)");
  }
}

TEST(VegaDirs, OwnFolderFirstThenTheXdgDataDirs) {
  const char* own = std::getenv("RUNX_JAVASCRIPT_DIR");
  const char* xdg = std::getenv("XDG_DATA_DIRS");
  const std::string saved_own = own ? own : "", saved_xdg = xdg ? xdg : "";
  setenv("RUNX_JAVASCRIPT_DIR", "/opt/js", 1);
  setenv("XDG_DATA_DIRS", "/a:/b/", 1);
  EXPECT_EQ(JavaScriptDirs(), (std::vector<std::string>{"/opt/js", "/a/javascript", "/b/javascript"}));
  unsetenv("RUNX_JAVASCRIPT_DIR");
  unsetenv("XDG_DATA_DIRS");
  EXPECT_EQ(JavaScriptDirs(), (std::vector<std::string>{"/usr/local/share/javascript", "/usr/share/javascript"}));
  if (own) setenv("RUNX_JAVASCRIPT_DIR", saved_own.c_str(), 1);
  if (xdg) setenv("XDG_DATA_DIRS", saved_xdg.c_str(), 1);
}

// Debian's libjs-vega, where it is installed: every module is found.
TEST(VegaDebian, TheInstalledPackageHasEveryModule) {
  if (!std::filesystem::exists("/usr/share/javascript/vega")) GTEST_SKIP() << "libjs-vega is not installed";
  const std::string script = LoadVegaScript({"/usr/share/javascript"});
  EXPECT_GT(script.size(), 300000u);
  EXPECT_EQ(script.find("</script"), std::string::npos);
}

}  // namespace
}  // namespace runx::report
