#include "report/html.h"

#include <fmt/format.h>

#include <set>

namespace runx::report {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kStyle = R"css(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #212121; margin: 0;
       background: #fafafa; }
header, section { max-width: 1100px; margin: 0 auto; padding: 8px 24px; }
header { border-bottom: 1px solid #e0e0e0; background: #fff; }
h1 { font-size: 22px; margin: 12px 0 4px; }
h2 { font-size: 19px; margin: 28px 0 6px; border-bottom: 2px solid #1565c0; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 4px; }
.meta, figcaption, .note { color: #616161; font-size: 13px; }
nav a { margin-right: 14px; }
figure { margin: 12px 0 20px; background: #fff; border: 1px solid #e0e0e0; border-radius: 4px; padding: 8px 12px; }
figcaption { max-width: 860px; }
table { border-collapse: collapse; margin: 6px 0 12px; background: #fff; font-size: 13px; }
th, td { border: 1px solid #e0e0e0; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eceff1; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.env td:first-child { white-space: nowrap; color: #455a64; }
table.env td { word-break: break-all; }
tr.noise td { background: #fff8e1; }
ul.noise { color: #e65100; }
.absent { color: #757575; font-style: italic; }
td.faster { background: #e8f5e9; color: #1b5e20; font-weight: 600; }
td.slower { background: #ffebee; color: #b71c1c; font-weight: 600; }
ul.remarks { color: #455a64; }
#runx-errors { display: none; background: #ffebee; border: 1px solid #c62828; color: #b71c1c; padding: 8px 12px; }
)css";

// Runs before anything else: every error, rejected promise, console error or warning is kept,
// for the test mode's summary and the banner.
constexpr const char* kCapture = R"js(window.runxErrors = []; window.runxWarnings = [];
window.addEventListener('error', function (e) { window.runxErrors.push('error: ' + e.message); });
window.addEventListener('unhandledrejection', function (e) { window.runxErrors.push('rejected: ' + e.reason); });
(function () {
  var error = console.error, warn = console.warn;
  console.error = function () { window.runxErrors.push(Array.prototype.join.call(arguments, ' ')); error.apply(console, arguments); };
  console.warn = function () { window.runxWarnings.push(Array.prototype.join.call(arguments, ' ')); warn.apply(console, arguments); };
})();
)js";

// Draws every chart of #runx-charts into its figure, then, with #test or ?test in the address,
// writes {"charts": [{"id", "svg", "marks": {name: {"instances", "items"}}}], "errors",
// "warnings"} into #runx-test-result.
constexpr const char* kRender = R"js((function () {
  var charts = JSON.parse(document.getElementById('runx-charts').textContent);
  function count(view) {
    var marks = {};
    (function walk(node) {
      if (!node) return;
      if (node.marktype !== undefined && node.name) {
        var m = marks[node.name] || (marks[node.name] = {instances: 0, items: 0});
        m.instances += 1;
        m.items += (node.items || []).length;
      }
      (node.items || []).forEach(walk);
    })(view.scenegraph().root);
    return marks;
  }
  function draw(chart) {
    var box = document.getElementById(chart.id).querySelector('.view');
    try {
      var view = new vega.View(vega.parse(chart.spec), {renderer: 'svg', container: box, hover: true});
      return view.runAsync().then(function () {
        return {id: chart.id, svg: box.querySelectorAll('svg').length, marks: count(view)};
      }, function (e) {
        window.runxErrors.push(chart.id + ': ' + e);
        return {id: chart.id, error: String(e)};
      });
    } catch (e) {
      window.runxErrors.push(chart.id + ': ' + e);
      box.textContent = 'this chart could not be drawn: ' + e;
      return Promise.resolve({id: chart.id, error: String(e)});
    }
  }
  Promise.all(charts.map(draw)).then(function (drawn) {
    if (window.runxErrors.length) {
      var banner = document.getElementById('runx-errors');
      banner.textContent = 'errors while drawing: ' + window.runxErrors.join('; ');
      banner.style.display = 'block';
    }
    if (/(^|[#?&])test(&|$)/.test(location.hash) || /(^|[?&])test(&|$)/.test(location.search.slice(1))) {
      var out = document.getElementById('runx-test-result');
      out.textContent = JSON.stringify({charts: drawn, errors: window.runxErrors, warnings: window.runxWarnings});
    }
  });
})();
)js";

std::string Figure(const Chart& c) {
  return fmt::format(
      "<figure id=\"{}\" class=\"chart\"><h3>{}</h3><div class=\"view\"></div><figcaption>{}</figcaption></figure>\n",
      EscapeHtml(c.id), EscapeHtml(c.title), EscapeHtml(c.caption));
}

std::string Absent(const std::string& what) { return "<p class=\"absent\">" + EscapeHtml(what) + "</p>\n"; }

std::string EnvironmentTable(const RunReport& r) {
  std::string out = "<table class=\"env\"><tbody>\n";
  for (const auto& [key, value] : EnvironmentRows(r.run)) {
    out += fmt::format("<tr{}><td>{}</td><td>{}</td></tr>\n", key.rfind("noise.", 0) == 0 ? " class=\"noise\"" : "",
                       EscapeHtml(key), EscapeHtml(value));
  }
  return out + "</tbody></table>\n";
}

std::string NoiseList(const std::vector<VariantRow>& rows) {
  const std::string text = RenderNoise(rows);
  if (text.empty()) return "";
  std::string out = "<ul class=\"noise\">";
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out += "<li>" + EscapeHtml(text.substr(start, end - start)) + "</li>";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out + "</ul>\n";
}

std::string RunSection(const RunReport& r) {
  const std::vector<Chart> charts = RunCharts(r);
  const auto chart = [&](const std::string& suffix) -> const Chart* {
    for (const Chart& c : charts) {
      if (c.id == "run-" + std::to_string(r.run.id) + suffix) return &c;
    }
    return nullptr;
  };
  const auto figure_or = [&](const std::string& suffix, const std::string& absent) {
    const Chart* c = chart(suffix);
    return c ? Figure(*c) : Absent(absent);
  };
  std::string out = fmt::format("<section id=\"run-{}\">\n<h2>Run {} of {}</h2>\n<p class=\"meta\">{}</p>\n", r.run.id,
                                r.run.id, EscapeHtml(r.run.experiment), EscapeHtml(DescribeRun(r.run)));
  out += "<h3>Variants</h3>\n";
  out += r.variants.empty() ? Absent("the run has no trial") : HtmlTable(ReportTextTable(r.variants), "variants");
  out += NoiseList(r.variants);
  if (r.variants.size() == 1) {
    out += Absent("One variant: nothing to compare (the speedup chart needs a variant besides the baseline).");
  } else {
    out += figure_or("-speedup", "No speedup: no baseline with measured steps, or no other variant with them.");
  }
  out += figure_or("-steps", "No step-time distribution: no ok trial has measured steps.");
  out += figure_or("-loss", "No loss curve: no step recorded a loss (task: infer records none).");
  if (const Chart* c = chart("-drift")) out += Figure(*c);
  out += figure_or("-memory", "No memory figures were recorded.");
  for (const char* suffix : {"-frontier", "-frontier-memory"}) {
    if (const Chart* c = chart(suffix)) out += Figure(*c);
  }
  out += "<h3>Environment</h3>\n" + EnvironmentTable(r);
  return out + "</section>\n";
}

// What `runx compare A B` prints, as the page's: the runs, what differs between them, the table
// (verdict cells coloured for faster and slower only) and the lines under it.
std::string ComparisonSection(const RunComparison& c) {
  std::string out = fmt::format("<section id=\"comparison\">\n<h2>Run {} against run {}</h2>\n", c.b.id, c.a.id);
  out += "<p class=\"meta\">A: " + EscapeHtml(DescribeRun(c.a)) + "<br>B: " + EscapeHtml(DescribeRun(c.b)) + "</p>\n";
  std::string environment = "environment: same runx build and platform";
  if (!c.environment.empty()) {
    environment = "environment differs: ";
    for (size_t i = 0; i < c.environment.size(); ++i) environment += (i ? "; " : "") + c.environment[i];
  }
  out += "<p class=\"meta\">" + EscapeHtml(environment) + "</p>\n";
  out += fmt::format(
      "<p class=\"note\">As <code>runx compare {} {}</code>: B/A is the throughput ratio (samples/s); "
      "a variant is faster or slower only when its whole 95% interval (from repeats and earlier runs "
      "on this host) lies beyond ±{:g}%.</p>\n",
      c.a.id, c.b.id, c.comparison.threshold * 100);
  out += c.comparison.variants.empty() ? Absent("no variant with the same configuration in both runs")
                                       : ComparisonTable(c.comparison);
  if (!c.remarks.empty()) {
    out += "<ul class=\"remarks\">";
    for (const std::string& line : c.remarks) out += "<li>" + EscapeHtml(line) + "</li>";
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

std::string HistorySection(const ExperimentHistory& h, const std::set<int64_t>& reported) {
  std::string out = fmt::format("<section id=\"history-of-{}\">\n<h2>History of {}</h2>\n", HtmlId(h.experiment),
                                EscapeHtml(h.experiment));
  const auto chart = HistoryChart(h, reported);
  out += chart ? Figure(*chart) : Absent("No run of the experiment has figures.");
  out += "<p class=\"note\">Newest first; ▲/▼: faster/slower than the run below (runx history).</p>\n";
  out += HtmlTable(HistoryTextTable(h.runs), "history");
  return out + "</section>\n";
}

std::set<int64_t> ReportedRuns(const HtmlReport& report) {
  std::set<int64_t> ids;
  for (const RunReport& r : report.runs) ids.insert(r.run.id);
  return ids;
}

std::string Title(const HtmlReport& report) {
  if (report.runs.size() == 1) {
    return fmt::format("runx report: {}, run {}", report.runs[0].run.experiment, report.runs[0].run.id);
  }
  return fmt::format("runx report: {} runs", report.runs.size());
}

}  // namespace

std::vector<Chart> PageCharts(const HtmlReport& report) {
  std::vector<Chart> out;
  for (const RunReport& r : report.runs) {
    for (Chart& c : RunCharts(r)) out.push_back(std::move(c));
  }
  const std::set<int64_t> reported = ReportedRuns(report);
  for (const ExperimentHistory& h : report.histories) {
    if (auto c = HistoryChart(h, reported)) out.push_back(std::move(*c));
  }
  return out;
}

std::string RenderHtmlReport(const HtmlReport& report, const PageInfo& info, const std::string& vega_script) {
  const std::string title = Title(report);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"" + EscapeHtml(info.generator) + "\">\n";
  out += "<title>" + EscapeHtml(title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n";
  out += "<script>\n" + std::string(kCapture) + "</script>\n";
  out += "<script>\n" + vega_script + "</script>\n</head>\n<body>\n<header>\n";
  out += "<h1>" + EscapeHtml(title) + "</h1>\n";
  out += fmt::format(
      "<p class=\"meta\">Written by {} from the results store {}; charts drawn by Vega 5 (Debian "
      "libjs-vega), inlined: the file needs no network.</p>\n",
      EscapeHtml(info.generator), EscapeHtml(info.store));
  out += "<nav>";
  if (report.comparison) {
    out += fmt::format("<a href=\"#comparison\">run {} against run {}</a>", report.comparison->b.id,
                       report.comparison->a.id);
  }
  for (const RunReport& r : report.runs) out += fmt::format("<a href=\"#run-{}\">run {}</a>", r.run.id, r.run.id);
  for (const ExperimentHistory& h : report.histories) {
    out += fmt::format("<a href=\"#history-of-{}\">history of {}</a>", HtmlId(h.experiment), EscapeHtml(h.experiment));
  }
  out += "</nav>\n<div id=\"runx-errors\"></div>\n</header>\n";
  if (report.comparison) out += ComparisonSection(*report.comparison);
  for (const RunReport& r : report.runs) out += RunSection(r);
  const std::set<int64_t> reported = ReportedRuns(report);
  for (const ExperimentHistory& h : report.histories) out += HistorySection(h, reported);
  json charts = json::array();
  for (const Chart& c : PageCharts(report)) charts.push_back({{"id", c.id}, {"spec", c.spec}});
  out += "<pre id=\"runx-test-result\" hidden></pre>\n";
  out += "<script type=\"application/json\" id=\"runx-charts\">" + ScriptJson(charts) + "</script>\n";
  out += "<script>\n" + std::string(kRender) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace runx::report
