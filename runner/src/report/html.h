#pragma once
// The page of `runx report`: one self-contained HTML file (works offline, from file://) with the
// charts (html_charts.h, drawn by the inlined Vega, vega_library.h), the report's tables and the
// environment, and for two runs `runx compare`'s table. Opened with #test in its address, the page writes what it drew
// (marks per chart, errors) as JSON into <pre id="runx-test-result">, for the browser test. No LibTorch.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/html_charts.h"
#include "report/html_data.h"
#include "report/table.h"

namespace runx::report {

/// What the page says about where it comes from. No time of writing: the same store gives the
/// same page, byte for byte.
struct PageInfo {
  std::string generator;  ///< e.g. "runx 0.1.0 (git abc1234)"
  std::string store;      ///< the results store's path
};

/// The whole page. `vega_script` is LoadVegaScript's; it is inlined as is.
std::string RenderHtmlReport(const HtmlReport& report, const PageInfo& info, const std::string& vega_script);

/// Every chart of the page, in page order: each run's (RunCharts), then each history's.
std::vector<Chart> PageCharts(const HtmlReport& report);

/// `text` for HTML text and attribute values: & < > " ' escaped.
std::string EscapeHtml(const std::string& text);

/// `value` as JSON text that is safe inside a <script> element: every '<' written \u003c.
std::string ScriptJson(const nlohmann::ordered_json& value);

/// The class of body cell (row, column) of a table, "" for none: e.g. "faster" on a verdict.
using CellClass = std::function<std::string(size_t row, size_t column)>;

/// A table for people as an HTML <table> (right-aligned columns get class "num"; `cell_class`
/// adds its class to a body cell).
std::string HtmlTable(const TextTable& table, const std::string& css_class = "", const CellClass& cell_class = {});

/// `runx compare A B`'s table as the page's: CompareTextTable, its verdict cells of class
/// "faster" or "slower" for those verdicts only (no change and inconclusive stay plain).
std::string ComparisonTable(const Comparison& comparison);

/// A run's environment as (key, value) rows: the run (experiment, status, times, host, devices,
/// build, runx version and build identity, git, platforms, overrides, tag, note, your commit), then its
/// environment keys in key order (noise.* among them).
std::vector<std::pair<std::string, std::string>> EnvironmentRows(const store::RunOverview& run);

}  // namespace runx::report
