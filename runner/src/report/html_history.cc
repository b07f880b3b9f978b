// HistoryChart: an experiment's runs over builds, oldest left, with compare's verdicts marked.
#include <fmt/format.h>

#include "report/html_charts.h"

namespace runx::report {
namespace {

using json = nlohmann::ordered_json;

json Scaled(const std::string& scale, const std::string& field) { return {{"scale", scale}, {"field", field}}; }
json Value(double v) { return {{"value", v}}; }
json Value(const std::string& v) { return {{"value", v}}; }

// "run 12 · abc1234" (the x axis' key: unique per run).
std::string RunKey(const store::RunOverview& run) { return fmt::format("run {} · {}", run.id, BuildName(run)); }

json Point(const HistoryRun& h, const HistoryVariant& v, int order) {
  json p = {{"run", RunKey(h.run)},
            {"run_id", h.run.id},
            {"order", order},
            {"date", ShortDate(h.run.started_at)},
            {"label", v.figures.label},
            {"samples_per_s", *v.figures.samples_per_s},
            {"change", "new"},
            {"vs", ""}};
  if (v.vs_previous) {
    p["change"] = v.vs_previous->ratio ? ChangeName(v.vs_previous->verdict.change) : "-";
    p["vs"] = fmt::format("{} vs run {}{}", ChangeCell(v), v.previous_run.value_or(0),
                          v.platform_changed ? ", another platform" : "");
  }
  return p;
}

// A symbol mark over the points of `data`; `outlined` in black (the verdicts, which must stand
// out from the variants' colours).
json Symbols(const std::string& name, const std::string& data, json fill, const std::string& shape, int size,
             bool outlined) {
  return {{"type", "symbol"},
          {"name", name},
          {"from", {{"data", data}}},
          {"encode",
           {{"enter",
             {{"x", Scaled("x", "run")},
              {"y", Scaled("y", "samples_per_s")},
              {"shape", Value(shape)},
              {"size", Value(size)},
              {"fill", std::move(fill)},
              {"stroke", Value(outlined ? "#000000" : "transparent")},
              {"tooltip", {{"signal",
                            "{'run': datum.run, 'date': datum.date, 'variant': datum.label, 'samples/s': "
                            "format(datum.samples_per_s, '.1f'), 'vs previous': datum.vs}"}}}}}}}};
}

}  // namespace

std::optional<Chart> HistoryChart(const ExperimentHistory& history, const std::set<int64_t>& reported) {
  json points = json::array(), slower = json::array(), faster = json::array(), marked = json::array();
  int order = 0;
  for (auto it = history.runs.rbegin(); it != history.runs.rend(); ++it, ++order) {
    if (reported.count(it->run.id)) marked.push_back({{"run", RunKey(it->run)}});
    for (const HistoryVariant& v : it->variants) {
      if (!v.figures.samples_per_s) continue;
      json p = Point(*it, v, order);
      if (p["change"] == "slower") slower.push_back(p);
      if (p["change"] == "faster") faster.push_back(p);
      points.push_back(std::move(p));
    }
  }
  if (points.empty()) return std::nullopt;
  json spec = {{"$schema", "https://vega.github.io/schema/vega/v5.json"},
               {"description", "samples/s per variant over the runs of the experiment"},
               {"width", 820},
               {"height", 260},
               {"padding", 8},
               {"autosize", {{"type", "pad"}}}};
  spec["data"] = json::array({{{"name", "history"}, {"values", points}},
                              {{"name", "slower"}, {"values", slower}},
                              {{"name", "faster"}, {"values", faster}},
                              {{"name", "reported_runs"}, {"values", marked}}});
  spec["scales"] = json::array(
      {{{"name", "x"},
        {"type", "point"},
        {"domain", {{"data", "history"}, {"field", "run"}, {"sort", {{"field", "order"}, {"op", "min"}}}}},
        {"range", "width"},
        {"padding", 0.5}},
       {{"name", "y"}, {"type", "linear"}, {"domain", {{"data", "history"}, {"field", "samples_per_s"}}},
        {"range", "height"}, {"zero", false}, {"nice", true}},
       {{"name", "color"}, {"type", "ordinal"}, {"domain", {{"data", "history"}, {"field", "label"}}},
        {"range", {{"scheme", "tableau10"}}}}});
  spec["axes"] = json::array(
      {{{"orient", "bottom"}, {"scale", "x"}, {"title", "run (oldest left) and build"}, {"labelAngle", -30},
        {"labelAlign", "right"}},
       {{"orient", "left"}, {"scale", "y"}, {"grid", true}, {"title", "samples/s"}}});
  spec["legends"] = json::array({{{"stroke", "color"}, {"title", "variant"}, {"orient", "right"}}});
  json line = {{"type", "line"},
               {"name", "lines"},
               {"from", {{"data", "faceted"}}},
               {"encode",
                {{"enter",
                  {{"x", Scaled("x", "run")},
                   {"y", Scaled("y", "samples_per_s")},
                   {"stroke", Scaled("color", "label")},
                   {"strokeWidth", Value(2)}}}}}};
  spec["marks"] = json::array(
      {{{"type", "rule"},
        {"name", "reported"},
        {"from", {{"data", "reported_runs"}}},
        {"encode",
         {{"enter",
           {{"x", Scaled("x", "run")}, {"y", Value(0)}, {"y2", {{"signal", "height"}}}, {"stroke", Value("#90caf9")},
            {"strokeWidth", Value(8)}, {"strokeOpacity", Value(0.5)}}}}}},
       {{"type", "group"},
        {"name", "series"},
        {"from", {{"facet", {{"name", "faceted"}, {"data", "history"}, {"groupby", "label"}}}}},
        {"marks", json::array({line})}},
       Symbols("points", "history", Scaled("color", "label"), "circle", 40, false),
       Symbols("regressions", "slower", Value("#c62828"), "triangle-down", 170, true),
       Symbols("improvements", "faster", Value("#2e7d32"), "triangle-up", 170, true)});
  return Chart{"history-" + HtmlId(history.experiment),
               "History of " + history.experiment,
               fmt::format("Throughput (pooled samples/s) of each variant in the newest {} runs of the experiment, "
                           "oldest left. Red triangles: slower than the same configuration in the run before, green: "
                           "faster, by runx compare's rule (the whole 95% interval beyond ±{:g}%). Blue bands: the "
                           "runs of this report.",
                           history.runs.size(), history.threshold * 100),
               std::move(spec)};
}

}  // namespace runx::report
