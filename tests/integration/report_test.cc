// runx report through the real runx binary on a real store, opened in Debian's headless chromium
// from file://: the page loads without a console message or error, every chart is drawn with as
// many marks as the store says (bars = variants, whiskers = intervals, points = measured steps,
// ...), and a screenshot is kept in <build>/test-artifacts/. The store: two runs of a tiny
// experiment with a technique that sleeps in every step (tests/plugins/test_sleep.cc), the second
// run sleeping longer (a regression of that variant), under auto_batch and a memory limit (a
// frontier with probes that fit and some that do not). With both runs named, the page begins with
// what `runx compare 1 2` says.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../remove_tree.h"
#include "run_util.h"
#include "store/store.h"

namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using runx::testing::Runx;

constexpr const char* kChromium = "/usr/bin/chromium";

// Baseline and test_sleep (10 ms a step), 3 repeats (the fewest a history point's interval is
// drawn from), of a model so small that the sleep is
// most of a step; the batch found by auto_batch under a 128 KiB host limit (~160 samples after
// about 16 probes, 3 of which run out of memory).
constexpr const char* kExperiment =
    "name: tiny_report\n"
    "device: cpu\n"
    "model: {name: mlp, hidden: [32]}\n"
    "data: {source: synthetic, shape: [64], num_classes: 5, batch_size: auto}\n"
    "train: {warmup_steps: 1, steps: 8, eval: false, optimizer: {name: sgd, lr: 0.01}}\n"
    "repeats: 3\n"
    "optimizations:\n"
    "  memory: {limit_bytes: 131072}\n"
    "  auto_batch: {multiple_of: 1, probe_steps: 1, headroom: 1.0}\n"
    "  test_sleep: {ms: 10}\n"
    "sweep: {mode: ablation, axes: {optimizations: [test_sleep]}}\n";

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text of <pre id="runx-test-result"> in a DOM chromium dumped (&amp; &lt; &gt; decoded).
std::string TestResult(const std::string& dom) {
  const std::string open = "id=\"runx-test-result\"";
  size_t at = dom.find(open);
  if (at == std::string::npos) return "";
  at = dom.find('>', at) + 1;
  const std::string text = dom.substr(at, dom.find("</pre>", at) - at);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    bool replaced = false;
    for (const auto& [entity, c] : {std::pair{"&amp;", '&'}, std::pair{"&lt;", '<'}, std::pair{"&gt;", '>'}}) {
      const std::string e = entity;
      if (text.compare(i, e.size(), e) == 0) {
        out += c;
        i += e.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i];
  }
  return out;
}

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_report_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
    setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
  }
  void TearDown() override {
    unsetenv("RUNX_PLUGIN_PATH");
    runx::testing::RemoveTree(dir_.string());
  }

  // Two runs of kExperiment; in the second test_sleep sleeps 20 ms more (10 -> 30 ms a step).
  void MakeStore() {
    const fs::path file = dir_ / "tiny_report.yaml";
    std::ofstream(file) << kExperiment;
    const auto first = Runx(file.string() + " --db " + db_ + " -q");
    ASSERT_EQ(first.status, 0) << first.out;
    setenv("RUNX_TEST_SLEEP_EXTRA_MS", "20", 1);
    const auto second = Runx(file.string() + " --db " + db_ + " -q --force");
    unsetenv("RUNX_TEST_SLEEP_EXTRA_MS");
    ASSERT_EQ(second.status, 0) << second.out;
    ASSERT_EQ(Count("SELECT count(*) FROM trials WHERE status <> 'ok'"), 0) << Rows("SELECT label, error FROM trials");
  }

  int64_t Count(const std::string& sql) {
    SQLite::Database db(db_, SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }
  std::string Rows(const std::string& sql) {
    SQLite::Database db(db_, SQLite::OPEN_READONLY);
    SQLite::Statement q(db, sql);
    std::string out;
    while (q.executeStep()) {
      for (int c = 0; c < q.getColumnCount(); ++c)
        out += q.getColumn(c).getString() + (c + 1 < q.getColumnCount() ? "|" : "\n");
    }
    return out;
  }

  // What the page should draw for run `run` (and the history of its experiment), from the store.
  std::map<std::string, std::map<std::string, int64_t>> Expected(int64_t run) {
    const std::string r = std::to_string(run);
    const std::string ok =
        " FROM run_trials rt JOIN trials t ON t.id = rt.trial_id WHERE rt.run_id = " + r + " AND t.status = 'ok'";
    const int64_t variants = Count("SELECT count(DISTINCT rt.label)" + ok);
    const int64_t steps = Count("SELECT count(*)" + ok.substr(0, ok.find(" WHERE")) +
                                " JOIN steps s ON s.trial_id = t.id WHERE rt.run_id = " + r +
                                " AND t.status = 'ok' AND s.phase = 'measure' AND s.wall_ms > 0");
    // Loss positions per variant: its (phase, step) pairs with a loss, over its repeats.
    const int64_t loss_points =
        Count("SELECT sum(n) FROM (SELECT count(DISTINCT s.phase || s.step) AS n" + ok.substr(0, ok.find(" WHERE")) +
              " JOIN steps s ON s.trial_id = t.id WHERE rt.run_id = " + r +
              " AND t.status = 'ok' AND s.phase IN ('warmup', 'measure') AND s.loss IS NOT NULL "
              "GROUP BY rt.label)");
    const int64_t baseline_points = Count("SELECT count(DISTINCT s.phase || s.step)" + ok.substr(0, ok.find(" WHERE")) +
                                          " JOIN steps s ON s.trial_id = t.id WHERE rt.run_id = " + r +
                                          " AND rt.is_baseline = 1 AND t.status = 'ok' AND s.loss IS NOT NULL "
                                          "AND s.phase IN ('warmup', 'measure')");
    const auto probes = [&](const std::string& where) {
      return Count("SELECT count(*) FROM run_trials rt JOIN metrics m ON m.trial_id = rt.trial_id WHERE rt.run_id = " +
                   r + " AND " + where);
    };
    const int64_t memory =
        Count("SELECT count(*) FROM (SELECT DISTINCT rt.label, m.name" + ok.substr(0, ok.find(" WHERE")) +
              " JOIN metrics m ON m.trial_id = t.id WHERE rt.run_id = " + r +
              " AND t.status = 'ok' AND m.step IS NULL AND m.value IS NOT NULL "
              "AND m.name IN ('peak_mem_bytes', 'reserved_mem_bytes'))");
    const std::string id = "run-" + r;
    std::map<std::string, std::map<std::string, int64_t>> e;
    e[id + "-speedup"] = {{"bars", variants}, {"values", variants}, {"whiskers", variants - 1}, {"one", 1}};
    e[id + "-steps"] = {{"boxes", variants}, {"medians", variants}, {"ranges", variants}, {"points", steps}};
    // Markers: the variants take turns, so V curves of the same n steps (n <= 40 V) share n markers;
    // the drift chart's one curve has a marker on every step.
    EXPECT_EQ(loss_points % variants, 0) << "variants with different steps";
    e[id + "-loss"] = {{"series", variants}, {"lines", loss_points}, {"markers", loss_points / variants}};
    e[id + "-drift"] = {{"series", variants - 1},
                        {"lines", loss_points - baseline_points},
                        {"markers", loss_points - baseline_points},
                        {"zero", 1}};
    e[id + "-memory"] = {{"variants", variants}, {"bars", memory}, {"values", memory}};
    for (const char* chart : {"-frontier", "-frontier-memory"}) {
      e[id + chart] = {{"probes", probes("m.name = 'auto_batch.fits' AND m.value = 1")},
                       {"failed", probes("m.name = 'auto_batch.fits' AND m.value = 0")},
                       {"chosen", probes("m.name = 'auto_batch.chosen' AND m.step IS NULL")}};
    }
    return e;
  }

  // Opens `page` in headless chromium with #test; the test-mode JSON and chromium's stderr.
  std::pair<json, std::string> OpenInChromium(const fs::path& page, const std::string& screenshot = "") {
    const fs::path profile = dir_ / "chromium-profile";
    const std::string common = std::string("timeout 20 ") + kChromium +
                               " --headless=new --disable-gpu --no-sandbox --no-first-run --hide-scrollbars"
                               " --user-data-dir=" +
                               profile.string() + " --virtual-time-budget=8000";
    const fs::path dom = dir_ / "dom.html", log = dir_ / "chromium.log";
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = std::system((common + " --enable-logging=stderr --v=0 --dump-dom 'file://" + page.string() +
                                "#test' > " + dom.string() + " 2> " + log.string())
                                   .c_str());
    EXPECT_EQ(rc, 0) << Read(log);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
    if (!screenshot.empty()) {
      fs::create_directories(fs::path(screenshot).parent_path());
      fs::remove(screenshot);
      const int shot = std::system((common + " --window-size=1400,3000 --screenshot=" + screenshot + " 'file://" +
                                    page.string() + "' > /dev/null 2>&1")
                                       .c_str());
      EXPECT_EQ(shot, 0);
    }
    const std::string result = TestResult(Read(dom));
    if (result.empty()) {
      ADD_FAILURE() << "the page wrote no test result; chromium said:\n" << Read(log);
      return {json::object(), Read(log)};
    }
    return {json::parse(result), Read(log)};
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(ReportCli, ChromiumDrawsEveryChartWithTheMarksTheStoreHolds) {
  if (!fs::exists(kChromium))
    GTEST_SKIP() << "no " << kChromium << " (Debian package chromium): the browser test needs it";
  MakeStore();
  const fs::path page = dir_ / "report.html";
  const auto r = Runx("report -o " + page.string() + " --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("runx report: wrote " + page.string() + " (run 2, 8 charts"), std::string::npos) << r.out;
  const std::string html = Read(page);
  EXPECT_EQ(html.find("src=\""), std::string::npos) << "the page loads something from outside";
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);

  const std::string artifact = std::string(RUNX_TEST_ARTIFACT_DIR) + "/report.png";
  const auto [result, log] = OpenInChromium(page, artifact);
  EXPECT_EQ(result.value("errors", json::array()), json::array()) << result.dump(1);
  EXPECT_EQ(result.value("warnings", json::array()), json::array()) << result.dump(1);
  EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << "the page wrote to the console:\n" << log;

  std::map<std::string, std::map<std::string, int64_t>> expected = Expected(2);
  // History: both runs, every variant with figures; regressions and improvements as runx history
  // judges them (test_sleep must be among the regressions: 10 -> 30 ms a step).
  const json history = json::parse(Runx("history tiny_report --db " + db_ + " --format json").out);
  int64_t slower = 0, faster = 0;
  bool sleep_regressed = false;
  for (const json& row : history) {
    slower += row["change"] == "slower";
    faster += row["change"] == "faster";
    if (row["run_id"] == 2 && row["label"] == "test_sleep") sleep_regressed = row["change"] == "slower";
  }
  EXPECT_TRUE(sleep_regressed) << history.dump(1);
  // A whisker for each run's variant measured by three processes or more (ok trials with measured
  // steps; kMinSpreadDf + 1).
  const int64_t whiskers = Count(
      "SELECT count(*) FROM (SELECT rt.run_id, rt.label FROM run_trials rt JOIN trials t ON t.id = rt.trial_id "
      "WHERE t.status = 'ok' AND EXISTS (SELECT 1 FROM steps s WHERE s.trial_id = t.id AND s.phase = 'measure') "
      "GROUP BY rt.run_id, rt.label HAVING count(*) >= 3)");
  EXPECT_EQ(whiskers, 4);  // 2 runs x 2 variants, 3 repeats each
  expected["history-tiny_report"] = {{"points", static_cast<int64_t>(history.size())},
                                     {"whiskers", whiskers},
                                     {"series", Count("SELECT count(DISTINCT label) FROM run_trials")},
                                     {"regressions", slower},
                                     {"improvements", faster},
                                     {"reported", 1}};
  std::set<std::string> drawn;
  for (const json& chart : result.value("charts", json::array())) {
    const std::string id = chart["id"];
    drawn.insert(id);
    EXPECT_FALSE(chart.contains("error")) << chart.dump();
    EXPECT_EQ(chart.value("svg", 0), 1) << id;
    ASSERT_TRUE(expected.count(id)) << "unexpected chart " << id;
    for (const auto& [mark, items] : expected[id]) {
      EXPECT_EQ(chart["marks"][mark].value("items", -1), items) << id << ": mark " << mark << "\n" << chart.dump();
    }
  }
  std::set<std::string> wanted;
  for (const auto& [id, marks] : expected) wanted.insert(id);
  EXPECT_EQ(drawn, wanted);
  // The store had what the charts need: not a vacuous count.
  EXPECT_EQ(expected["run-2-speedup"]["bars"], 2);
  EXPECT_GT(expected["run-2-steps"]["points"], 20);
  EXPECT_GT(expected["run-2-frontier"]["probes"], 4);
  EXPECT_GT(expected["run-2-frontier"]["failed"], 0);

  // The screenshot: a PNG with the charts in it (an empty page of this size is ~11 KB).
  const std::string png = Read(artifact);
  ASSERT_GT(png.size(), 60000u) << artifact;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_F(ReportCli, SeveralRunsEachGetTheirCharts) {
  if (!fs::exists(kChromium))
    GTEST_SKIP() << "no " << kChromium << " (Debian package chromium): the browser test needs it";
  MakeStore();
  const fs::path page = dir_ / "both.html";
  const auto r = Runx("report previous latest -o " + page.string() + " --store " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(runs 1, 2, 15 charts"), std::string::npos) << r.out;
  const auto [result, log] = OpenInChromium(page);
  EXPECT_EQ(result.value("errors", json::array()), json::array()) << result.dump(1);
  std::map<std::string, std::map<std::string, int64_t>> expected = Expected(1);
  for (auto& [id, marks] : Expected(2)) expected[id] = marks;
  int checked = 0;
  for (const json& chart : result.value("charts", json::array())) {
    const std::string id = chart["id"];
    if (id == "history-tiny_report") {
      EXPECT_EQ(chart["marks"]["reported"]["items"], 2);
      continue;
    }
    for (const auto& [mark, items] : expected.at(id)) {
      EXPECT_EQ(chart["marks"][mark].value("items", -1), items) << id << ": " << mark;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * 24);

  // Two runs: `runx compare 1 2` first, a row per variant it compares with its verdict, coloured
  // only where it is faster or slower (test_sleep slept 20 ms longer in run 2: slower, unless
  // the machine's load moved between the runs: then inconclusive, and plain).
  const std::string html = Read(page);
  const size_t comparison = html.find("<section id=\"comparison\">");
  ASSERT_NE(comparison, std::string::npos);
  EXPECT_LT(comparison, html.find("<section id=\"run-1\">"));
  const size_t table = html.find("<table class=\"comparison\">", comparison);
  const std::string rows = html.substr(table, html.find("</table>", table) - table);
  const json compare = json::parse(Runx("compare 1 2 --db " + db_ + " --format json").out);
  ASSERT_EQ(compare["variants"].size(), 2u) << compare.dump(1);
  int coloured = 0;
  for (const json& v : compare["variants"]) {
    const std::string label = v["label_a"];
    const std::string verdict = v["verdict"].is_string() ? v["verdict"].get<std::string>() : "-";
    const size_t at = rows.find("<tr><td>" + label + "</td>");
    ASSERT_NE(at, std::string::npos) << label << " in " << rows;
    const std::string row = rows.substr(at, rows.find("</tr>", at) - at);
    const bool decided = verdict == "faster" || verdict == "slower";
    coloured += decided;
    const std::string cell = decided ? "<td class=\"" + verdict + "\">" + verdict + "</td>"
                                     : "<td>" + verdict + (verdict == "no change" ? " (below the 2% threshold)" : "");
    EXPECT_NE(row.find(cell), std::string::npos) << cell << " in " << row;
  }
  // No other cell is coloured: no change and inconclusive stay plain.
  int cells = 0;
  for (const char* cell : {"<td class=\"faster\">", "<td class=\"slower\">"}) {
    for (size_t at = html.find(cell); at != std::string::npos; at = html.find(cell, at + 1)) ++cells;
  }
  EXPECT_EQ(cells, coloured);
}

TEST_F(ReportCli, ErrorsSayWhatToDo) {
  const fs::path page = dir_ / "r.html";
  const auto nostore = Runx("report -o " + page.string() + " --db " + (dir_ / "none.db").string());
  EXPECT_EQ(nostore.status, 2);
  EXPECT_NE(nostore.out.find("runx: error: no results store at '"), std::string::npos) << nostore.out;
  EXPECT_FALSE(fs::exists(dir_ / "none.db"));
  EXPECT_EQ(Runx("report --db " + db_).status, 2);  // -o is required
  runx::store::Store::Open(db_);                    // a store without runs
  const auto none = Runx("report -o " + page.string() + " --db " + db_);
  EXPECT_EQ(none.status, 2) << none.out;
  EXPECT_NE(none.out.find("runx: error: no finished run in results store"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("(runx history lists the runs)"), std::string::npos) << none.out;
  const auto bad = Runx("report 9 -o " + page.string() + " --db " + db_);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("no run 9 in results store"), std::string::npos) << bad.out;
  EXPECT_EQ(Runx("report -o " + page.string() + " --db " + db_ + " --threshold lots").status, 2);
  // Without Debian's Vega the message names the package (on a store with a run: references are
  // checked first).
  {
    runx::store::Store store = runx::store::Store::Open(db_);
    runx::store::RunInfo info;
    info.experiment_id = store.AddExperiment("e", "e.yaml", "name: e\n", "sha-e");
    info.started_at = "2026-12-01T10:00:00Z";
    info.host = "box";
    store.EndRun(store.BeginRun(info), runx::RunStatus::kOk, "2026-12-01T10:00:01Z");
  }
  setenv("XDG_DATA_DIRS", (dir_ / "nothing").c_str(), 1);
  const auto novega = Runx("report -o " + page.string() + " --db " + db_);
  unsetenv("XDG_DATA_DIRS");
  EXPECT_EQ(novega.status, 1);
  EXPECT_NE(novega.out.find("runx: error: the charts need Vega 5 from the Debian package libjs-vega"),
            std::string::npos)
      << novega.out;
  EXPECT_NE(novega.out.find("sudo apt-get install libjs-vega"), std::string::npos) << novega.out;
  EXPECT_FALSE(fs::exists(page));
}

}  // namespace
