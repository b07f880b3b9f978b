// HistoryChart: an experiment's runs over time (date, your commit, tag), oldest left, each point with
// the interval of its processes, and compare's verdicts marked.
#include <fmt/format.h>

#include <map>
#include <utility>

#include "report/html_charts.h"

namespace runx::report {
namespace {

using json = nlohmann::ordered_json;

json Scaled(const std::string& scale, const std::string& field) { return {{"scale", scale}, {"field", field}}; }
json Value(double v) { return {{"value", v}}; }
json Value(const std::string& v) { return {{"value", v}}; }

// "run 12 · 2026-12-03 10:00 · 1a2b3c4 · 'before-fix'": the x axis' key, unique per run. The
// user's commit says which code ran; runx's own build only where there is no commit to name.
std::string RunKey(const store::RunOverview& run) {
  std::string key = fmt::format("run {} · {} · ", run.id, ShortDate(run.started_at));
  key += run.user_git_sha.empty() ? "runx " + BuildName(run) : UserCommitName(run);
  if (!run.tag.empty()) key += " · '" + run.tag + "'";
  return key;
}

json Point(const HistoryRun& h, const HistoryVariant& v, int order, const RateInterval* interval) {
  json p = {{"run", RunKey(h.run)},
            {"run_id", h.run.id},
            {"order", order},
            {"date", ShortDate(h.run.started_at)},
            {"commit", UserCommitName(h.run)},
            {"tag", h.run.tag.empty() ? "-" : h.run.tag},
            {"build", BuildName(h.run)},
            {"label", v.figures.label},
            {"samples_per_s", *v.figures.samples_per_s},
            {"interval", v.figures.ok_trials > 1 ? "- (fewer than 3 processes)" : "- (one process)"},
            {"change", "new"},
            {"vs", "new"}};
  if (interval) {
    p["interval"] = fmt::format("{:.1f}-{:.1f} ({} processes)", interval->low, interval->high, interval->processes);
  }
  if (v.vs_previous) {
    const std::string change = v.vs_previous->ratio ? ChangeName(v.vs_previous->ratio->change) : "-";
    const std::string platform = v.platform_changed ? ", another platform" : "";
    p["change"] = change;
    p["vs"] = v.vs_previous->ratio
                  ? fmt::format("{} vs run {} ({}){}", ChangeCell(v), v.previous_run.value_or(0), change, platform)
                  : fmt::format("vs run {}: {}{}", v.previous_run.value_or(0), v.vs_previous->note, platform);
  }
  return p;
}

constexpr const char* kTooltip =
    "{'run': datum.run_id, 'date': datum.date, 'your commit': datum.commit, 'tag': datum.tag, 'runx build': "
    "datum.build, 'variant': datum.label, 'samples/s': format(datum.samples_per_s, '.1f'), '95% interval': "
    "datum.interval, 'vs previous': datum.vs}";

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
              {"tooltip", {{"signal", kTooltip}}}}}}}};
}

}  // namespace

std::optional<Chart> HistoryChart(const ExperimentHistory& history, const std::set<int64_t>& reported) {
  std::map<std::pair<int64_t, std::string>, const RateInterval*> intervals;
  for (const HistoryInterval& i : history.intervals) intervals[{i.run_id, i.label}] = &i.interval;
  json points = json::array(), whiskers = json::array(), slower = json::array(), faster = json::array(),
       marked = json::array();
  int order = 0;
  for (auto it = history.runs.rbegin(); it != history.runs.rend(); ++it, ++order) {
    if (reported.count(it->run.id)) marked.push_back({{"run", RunKey(it->run)}});
    for (const HistoryVariant& v : it->variants) {
      if (!v.figures.samples_per_s) continue;
      const auto found = intervals.find({it->run.id, v.figures.label});
      const RateInterval* interval = found == intervals.end() ? nullptr : found->second;
      json p = Point(*it, v, order, interval);
      if (interval) {
        json w = p;
        w["low"] = interval->low;
        w["high"] = interval->high;
        whiskers.push_back(std::move(w));
      }
      if (p["change"] == "slower") slower.push_back(p);
      if (p["change"] == "faster") faster.push_back(p);
      points.push_back(std::move(p));
    }
  }
  if (points.empty()) return std::nullopt;
  json spec = {{"$schema", "https://vega.github.io/schema/vega/v5.json"},
               {"description", "samples/s per variant over the runs of the experiment"},
               {"width", 820},
               {"height", 280},
               {"padding", 8},
               {"autosize", {{"type", "pad"}}}};
  spec["data"] = json::array({{{"name", "history"}, {"values", points}},
                              {{"name", "intervals"}, {"values", whiskers}},
                              {{"name", "slower"}, {"values", slower}},
                              {{"name", "faster"}, {"values", faster}},
                              {{"name", "reported_runs"}, {"values", marked}}});
  // From zero, so that a point's height is its throughput and a 5% drop looks like one; the
  // whiskers' ends are in the domain, so that none is cut off.
  const json y_fields =
      json::array({{{"data", "history"}, {"field", "samples_per_s"}}, {{"data", "intervals"}, {"field", "high"}}});
  spec["scales"] =
      json::array({{{"name", "x"},
                    {"type", "point"},
                    {"domain", {{"data", "history"}, {"field", "run"}, {"sort", {{"field", "order"}, {"op", "min"}}}}},
                    {"range", "width"},
                    {"padding", 0.5}},
                   {{"name", "y"},
                    {"type", "linear"},
                    {"domain", {{"fields", y_fields}}},
                    {"range", "height"},
                    {"zero", true},
                    {"nice", true}},
                   {{"name", "color"},
                    {"type", "ordinal"},
                    {"domain", {{"data", "history"}, {"field", "label"}}},
                    {"range", {{"scheme", "tableau10"}}}}});
  spec["axes"] =
      json::array({{{"orient", "bottom"},
                    {"scale", "x"},
                    {"title", "run (oldest left) · date · your commit · tag"},
                    {"labelAngle", -30},
                    {"labelAlign", "right"},
                    {"labelLimit", 260}},
                   {{"orient", "left"}, {"scale", "y"}, {"grid", true}, {"title", "samples/s (axis from 0)"}}});
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
  spec["marks"] = json::array({{{"type", "rule"},
                                {"name", "reported"},
                                {"from", {{"data", "reported_runs"}}},
                                {"encode",
                                 {{"enter",
                                   {{"x", Scaled("x", "run")},
                                    {"y", Value(0)},
                                    {"y2", {{"signal", "height"}}},
                                    {"stroke", Value("#90caf9")},
                                    {"strokeWidth", Value(8)},
                                    {"strokeOpacity", Value(0.5)}}}}}},
                               {{"type", "group"},
                                {"name", "series"},
                                {"from", {{"facet", {{"name", "faceted"}, {"data", "history"}, {"groupby", "label"}}}}},
                                {"marks", json::array({line})}},
                               {{"type", "rule"},
                                {"name", "whiskers"},
                                {"from", {{"data", "intervals"}}},
                                {"encode",
                                 {{"enter",
                                   {{"x", Scaled("x", "run")},
                                    {"y", Scaled("y", "low")},
                                    {"y2", Scaled("y", "high")},
                                    {"stroke", Scaled("color", "label")},
                                    {"strokeWidth", Value(1.5)},
                                    {"tooltip", {{"signal", kTooltip}}}}}}}},
                               Symbols("points", "history", Scaled("color", "label"), "circle", 40, false),
                               Symbols("regressions", "slower", Value("#c62828"), "triangle-down", 170, true),
                               Symbols("improvements", "faster", Value("#2e7d32"), "triangle-up", 170, true)});
  return Chart{
      "history-" + HtmlId(history.experiment), "History of " + history.experiment,
      fmt::format("Throughput (pooled samples/s) of each variant in the newest {} runs of the experiment, "
                  "oldest left; the axis starts at 0. Each run is named by its date, the commit of your "
                  "repository it ran (runx's build where there is none) and its tag. Whiskers: the 95% "
                  "interval of the run's processes of the variant (its repeats: exp(mean ln rate ± "
                  "t·sd/√n)); a run of fewer than three processes has none. Red triangles: slower than the same "
                  "configuration when it was last measured, green: faster, by runx compare's rule (the "
                  "whole 95% interval beyond ±{:g}%); a change the evidence cannot judge (inconclusive) or "
                  "within the threshold is not marked. Blue bands: the runs of this report.",
                  history.runs.size(), history.threshold * 100),
      std::move(spec)};
}

}  // namespace runx::report
