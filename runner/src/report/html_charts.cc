#include "report/html_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace runx::report {
namespace {

using json = nlohmann::ordered_json;

constexpr int kWidth = 820;
constexpr double kMiB = 1024.0 * 1024.0;

// The height of a chart with one band of `band` pixels per row.
int BandHeight(size_t rows, int band = 30) { return std::max(80, static_cast<int>(rows) * band); }

json Spec(const std::string& description, int height) {
  return {{"$schema", "https://vega.github.io/schema/vega/v5.json"},
          {"description", description},
          {"width", kWidth},
          {"height", height},
          {"padding", 8},
          {"autosize", {{"type", "pad"}}}};
}

json Data(const std::string& name, json values) { return {{"name", name}, {"values", std::move(values)}}; }

json Value(double v) { return {{"value", v}}; }
json Value(const std::string& v) { return {{"value", v}}; }
json Scaled(const std::string& scale, const std::string& field) { return {{"scale", scale}, {"field", field}}; }
json Band(const std::string& scale, const std::string& field, double band) {
  return {{"scale", scale}, {"field", field}, {"band", band}};
}
json Signal(const std::string& expr) { return {{"signal", expr}}; }

json BandScale(const std::string& name, const std::string& data, const std::string& field, const std::string& range) {
  return {{"name", name},
          {"type", "band"},
          {"domain", {{"data", data}, {"field", field}}},
          {"range", range},
          {"padding", 0.2}};
}

json LinearScale(const std::string& name, json fields, const std::string& range, bool zero) {
  return {{"name", name},   {"type", "linear"}, {"domain", {{"fields", std::move(fields)}}},
          {"range", range}, {"zero", zero},     {"nice", true}};
}

json Axis(const std::string& orient, const std::string& scale, const std::string& title) {
  json a = {{"orient", orient}, {"scale", scale}, {"grid", orient == "bottom" || orient == "left"}};
  if (!title.empty()) a["title"] = title;
  return a;
}

// An axis of whole numbers (steps): no tick between two of them.
json StepAxis(const std::string& title) {
  json a = Axis("bottom", "x", title);
  a["tickMinStep"] = 1;
  a["format"] = "d";
  return a;
}

json Mark(const std::string& type, const std::string& name, const std::string& data, json enter) {
  json m = {{"type", type}, {"name", name}};
  if (!data.empty()) m["from"] = {{"data", data}};
  m["encode"] = {{"enter", std::move(enter)}};
  return m;
}

// Colour, dash and marker shape by variant, over `labels` (the run's variants with a loss, in
// order), so that a variant looks the same in the loss and the drift chart, and lines which
// coincide exactly stay apart: the later one's gaps show the earlier one, and their markers differ.
json VariantScales(const std::vector<std::string>& labels) {
  const json dashes =
      json::array({json::array({1, 0}), json::array({8, 4}), json::array({2, 3}), json::array({12, 3, 2, 3}),
                   json::array({4, 2}), json::array({1, 5}), json::array({16, 4}), json::array({6, 2, 2, 2})});
  const json shapes = json::array(
      {"circle", "square", "triangle-up", "diamond", "cross", "triangle-down", "triangle-right", "triangle-left"});
  return json::array(
      {{{"name", "color"}, {"type", "ordinal"}, {"domain", labels}, {"range", {{"scheme", "tableau10"}}}},
       {{"name", "dash"}, {"type", "ordinal"}, {"domain", labels}, {"range", dashes}},
       {{"name", "shape"}, {"type", "ordinal"}, {"domain", labels}, {"range", shapes}}});
}
// One legend for colour, dash and shape, each entry drawn as its line and marker are; `shown`:
// the variants the chart draws.
json LineLegend(const std::vector<std::string>& shown) {
  return {{"stroke", "color"}, {"strokeDash", "dash"},   {"shape", "shape"},
          {"values", shown},   {"title", "variant"},     {"orient", "right"},
          {"symbolSize", 140}, {"symbolStrokeWidth", 2}, {"symbolFillColor", "transparent"}};
}

// The values of field `by` in `rows`, in first-seen order.
std::vector<std::string> LabelsOf(const json& rows, const std::string& by) {
  std::vector<std::string> out;
  for (const json& r : rows) {
    const std::string label = r.at(by).get<std::string>();
    if (std::find(out.begin(), out.end(), label) == out.end()) out.push_back(label);
  }
  return out;
}

// The scales of a chart of lines by variant: linear x and y over `data`'s fields, then
// VariantScales over `labels`.
json LineScales(const std::string& data, const std::string& x, const std::string& y, bool y_zero,
                const std::vector<std::string>& labels) {
  json scales = json::array({LinearScale("x", json::array({{{"data", data}, {"field", x}}}), "width", true),
                             LinearScale("y", json::array({{{"data", data}, {"field", y}}}), "height", y_zero)});
  for (json& s : VariantScales(labels)) scales.push_back(std::move(s));
  return scales;
}

// The rows of `values` that get a marker. The i-th of V variants marks every k-th of its n
// points from the (i k / V)-th, k = max(V, ceil(n / 40)): coinciding curves take turns (their
// markers never share a step: circle, square, circle along one line), and no curve gets more than
// about 40.
json MarkerRows(const json& values, const std::string& by) {
  const std::vector<std::string> labels = LabelsOf(values, by);
  std::map<std::string, size_t> count;
  for (const json& v : values) ++count[v.at(by).get<std::string>()];
  std::map<std::string, std::pair<size_t, size_t>> every;  // label -> (stride, offset)
  for (size_t i = 0; i < labels.size(); ++i) {
    const size_t n = count[labels[i]];
    const size_t stride = std::max(labels.size(), (n + 39) / 40);
    every[labels[i]] = {stride, (i * stride / labels.size()) % n};
  }
  json out = json::array();
  std::map<std::string, size_t> seen;
  for (const json& v : values) {
    const std::string label = v.at(by).get<std::string>();
    const auto [stride, offset] = every[label];
    if (seen[label]++ % stride == offset) out.push_back(v);
  }
  return out;
}

// One line per value of `by` in `data` (a facet group `series` holding a line mark `lines`, dashed
// by variant), and hollow markers by variant from `markers` (a symbol mark `markers`).
json Lines(const std::string& data, const std::string& markers, const std::string& x, const std::string& y,
           const std::string& by) {
  const json tip =
      Signal("{'variant': datum." + by + ", 'step': datum." + x + ", '" + y + "': format(datum." + y + ", '.4~g')}");
  json line = Mark("line", "lines", "faceted",
                   {{"x", Scaled("x", x)},
                    {"y", Scaled("y", y)},
                    {"stroke", Scaled("color", by)},
                    {"strokeDash", Scaled("dash", by)},
                    {"strokeWidth", Value(2)},
                    {"tooltip", tip}});
  return json::array({{{"type", "group"},
                       {"name", "series"},
                       {"from", {{"facet", {{"name", "faceted"}, {"data", data}, {"groupby", by}}}}},
                       {"marks", json::array({line})}},
                      Mark("symbol", "markers", markers,
                           {{"x", Scaled("x", x)},
                            {"y", Scaled("y", y)},
                            {"shape", Scaled("shape", by)},
                            {"stroke", Scaled("color", by)},
                            {"strokeWidth", Value(1.5)},
                            {"size", Value(50)},
                            {"tooltip", tip}})});
}

std::string Fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

}  // namespace

std::string HtmlId(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '-';
  }
  return name;
}

std::optional<Chart> SpeedupChart(const RunReport& run) {
  const bool any = std::any_of(run.variants.begin(), run.variants.end(), [](const VariantRow& v) { return v.speedup; });
  if (!any) return std::nullopt;
  json rows = json::array(), intervals = json::array();
  std::set<std::string> kinds;
  for (const VariantRow& v : run.variants) {
    if (v.is_baseline && v.samples_per_s) {
      rows.push_back({{"label", v.label},
                      {"speedup", 1.0},
                      {"high", 1.0},
                      {"kind", "baseline"},
                      {"text", "1.00 (baseline)"},
                      {"verdict", "the baseline"}});
      kinds.insert("baseline");
    }
    if (!v.speedup) continue;
    const Ratio& s = *v.speedup;
    const std::string kind = ChangeName(s.change);
    kinds.insert(kind);
    const double high = s.interval ? s.interval->high : s.estimate;
    const std::string text = s.interval ? fmt::format("{} ({}-{}) {}", Fixed(s.estimate, 2), Fixed(s.interval->low, 2),
                                                      Fixed(s.interval->high, 2), kind)
                                        : fmt::format("{} {} (no interval)", Fixed(s.estimate, 2), kind);
    rows.push_back({{"label", v.label},
                    {"speedup", s.estimate},
                    {"high", high},
                    {"kind", kind},
                    {"text", text},
                    {"verdict", VerdictText(s, kDefaultThreshold)}});
    if (s.interval) intervals.push_back({{"label", v.label}, {"low", s.interval->low}, {"high", s.interval->high}});
  }
  // Only a verdict gets a verdict's colour: green faster, red slower; the rest are greys.
  const std::vector<std::pair<std::string, std::string>> colours = {{"baseline", "#757575"},
                                                                    {"faster", "#2e7d32"},
                                                                    {"slower", "#c62828"},
                                                                    {"no change", "#90a4ae"},
                                                                    {"inconclusive", "#cfd8dc"}};
  json domain = json::array(), range = json::array(), shown = json::array();
  for (const auto& [kind, colour] : colours) {
    domain.push_back(kind);
    range.push_back(colour);
    if (kinds.count(kind)) shown.push_back(kind);
  }
  json spec = Spec("speedup per variant with 95% intervals", BandHeight(rows.size()));
  spec["data"] = json::array({Data("speedups", rows), Data("intervals", intervals)});
  spec["scales"] = json::array(
      {BandScale("y", "speedups", "label", "height"),
       LinearScale(
           "x", json::array({{{"data", "speedups"}, {"field", "high"}}, {{"data", "speedups"}, {"field", "speedup"}}}),
           "width", true),
       {{"name", "color"}, {"type", "ordinal"}, {"domain", domain}, {"range", range}}});
  spec["axes"] =
      json::array({Axis("bottom", "x", "speedup over the baseline (throughput ratio; whiskers: 95% interval)"),
                   Axis("left", "y", "")});
  spec["legends"] = json::array({{{"fill", "color"},
                                  {"values", shown},
                                  {"title", "verdict"},
                                  {"orient", "bottom"},
                                  {"direction", "horizontal"}}});
  spec["marks"] = json::array(
      {Mark("rect", "bars", "speedups",
            {{"y", Band("y", "label", 0.15)},
             {"height", {{"scale", "y"}, {"band", 0.7}}},
             {"x", {{"scale", "x"}, {"value", 0}}},
             {"x2", Scaled("x", "speedup")},
             {"fill", Scaled("color", "kind")},
             {"tooltip", Signal("{'variant': datum.label, 'speedup': datum.text, 'verdict': datum.verdict}")}}),
       Mark("rule", "whiskers", "intervals",
            {{"x", Scaled("x", "low")},
             {"x2", Scaled("x", "high")},
             {"y", Band("y", "label", 0.5)},
             {"stroke", Value("#212121")},
             {"strokeWidth", Value(2)}}),
       Mark("rule", "one", "",
            {{"x", {{"scale", "x"}, {"value", 1}}},
             {"y", Value(0)},
             {"y2", Signal("height")},
             {"stroke", Value("#616161")},
             {"strokeDash", {{"value", json::array({4, 3})}}}}),
       Mark("text", "values", "speedups",
            {{"x", Scaled("x", "high")},
             {"dx", Value(6)},
             {"y", Band("y", "label", 0.5)},
             {"baseline", Value("middle")},
             {"text", {{"field", "text"}}},
             {"fontSize", Value(11)}})});
  return Chart{"run-" + std::to_string(run.run.id) + "-speedup", "Speedup over the baseline",
               fmt::format("Throughput of each variant over the run's baseline (pooled samples/s of the measured "
                           "steps of its ok trials), as in the end-of-run table. The whisker is the 95% interval from "
                           "the spread between processes (repeats, or earlier processes of the same configurations on "
                           "this host). Green: faster, red: slower, only where the whole interval lies beyond ±{0:g}%; "
                           "light grey: inconclusive (the interval reaches across the band, or there is none: then no "
                           "whisker either; the tooltip says why); blue-grey: no change (the whole interval within "
                           "±{0:g}%).",
                           kDefaultThreshold * 100),
               std::move(spec)};
}

std::optional<Chart> StepTimeChart(const RunReport& run) {
  if (run.step_boxes.empty()) return std::nullopt;
  json boxes = json::array(), points = json::array();
  std::string sampled;
  for (const StepBox& b : run.step_boxes) {
    boxes.push_back({{"label", b.label},
                     {"p10", b.p10},
                     {"q1", b.q1},
                     {"median", b.median},
                     {"q3", b.q3},
                     {"p90", b.p90},
                     {"steps", b.steps}});
    if (b.stride > 1) sampled += fmt::format(" {}: one in {} of its {} steps drawn.", b.label, b.stride, b.steps);
  }
  // Points spread across the band by the golden-ratio sequence: deterministic, evenly filled.
  std::map<std::string, int> seen;
  for (const StepPoint& p : run.step_points) {
    const int i = seen[p.label]++;
    const double jitter = std::fmod(static_cast<double>(i) * 0.6180339887498949, 1.0);
    points.push_back({{"label", p.label}, {"repeat", p.repeat}, {"ms", p.ms}, {"j", jitter}});
  }
  json spec = Spec("measured step times per variant", BandHeight(run.step_boxes.size(), 64));
  spec["data"] = json::array({Data("step_boxes", boxes), Data("step_points", points)});
  spec["scales"] = json::array(
      {BandScale("y", "step_boxes", "label", "height"),
       LinearScale(
           "x", json::array({{{"data", "step_points"}, {"field", "ms"}}, {{"data", "step_boxes"}, {"field", "p90"}}}),
           "width", false),
       {{"name", "color"},
        {"type", "ordinal"},
        {"domain", {{"data", "step_points"}, {"field", "repeat"}, {"sort", true}}},
        {"range", {{"scheme", "tableau10"}}}}});
  spec["axes"] = json::array({Axis("bottom", "x", "wall time of a measured step (ms)"), Axis("left", "y", "")});
  spec["legends"] = json::array({{{"fill", "color"}, {"title", "repeat"}, {"orient", "right"}}});
  const json tip = Signal(
      "{'variant': datum.label, 'median': format(datum.median, '.3~f') + ' ms', 'p25-p75': format(datum.q1, "
      "'.3~f') + '-' + format(datum.q3, '.3~f') + ' ms', 'p10-p90': format(datum.p10, '.3~f') + '-' + "
      "format(datum.p90, '.3~f') + ' ms', 'steps': datum.steps}");
  spec["marks"] = json::array(
      {Mark("rule", "ranges", "step_boxes",
            {{"x", Scaled("x", "p10")},
             {"x2", Scaled("x", "p90")},
             {"y", Band("y", "label", 0.5)},
             {"stroke", Value("#455a64")},
             {"strokeWidth", Value(1.5)}}),
       Mark("rect", "boxes", "step_boxes",
            {{"x", Scaled("x", "q1")},
             {"x2", Scaled("x", "q3")},
             {"y", Band("y", "label", 0.2)},
             {"y2", Band("y", "label", 0.8)},
             {"fill", Value("#cfd8dc")},
             {"stroke", Value("#455a64")},
             {"tooltip", tip}}),
       Mark("symbol", "points", "step_points",
            {{"x", Scaled("x", "ms")},
             {"y", Signal("scale('y', datum.label) + bandwidth('y') * (0.1 + 0.8 * datum.j)")},
             {"size", Value(14)},
             {"fill", Scaled("color", "repeat")},
             {"fillOpacity", Value(0.55)},
             {"tooltip", Signal("{'variant': datum.label, 'repeat': datum.repeat, 'ms': format(datum.ms, '.3~f')}")}}),
       Mark("rule", "medians", "step_boxes",
            {{"x", Scaled("x", "median")},
             {"y", Band("y", "label", 0.2)},
             {"y2", Band("y", "label", 0.8)},
             {"stroke", Value("#b71c1c")},
             {"strokeWidth", Value(2.5)}})});
  return Chart{"run-" + std::to_string(run.run.id) + "-steps", "Step-time distributions",
               "Every measured step of the variant's ok trials (points, coloured by repeat: repeats that disagree show "
               "as separate clouds), the box from the 25th to the 75th percentile with the median (red), and the "
               "line from the 10th to the 90th percentile, the spread the end-of-run table prints." +
                   sampled,
               std::move(spec)};
}

std::optional<Chart> LossChart(const RunReport& run) {
  if (run.loss.empty()) return std::nullopt;
  json values = json::array();
  for (const LossCurvePoint& p : run.loss) {
    values.push_back({{"label", p.label}, {"step", p.step}, {"loss", p.loss}, {"repeats", p.repeats}});
  }
  json spec = Spec("training loss per step and variant", 280);
  spec["data"] = json::array({Data("loss", values), Data("loss_markers", MarkerRows(values, "label"))});
  const std::vector<std::string> labels = LabelsOf(values, "label");
  spec["scales"] = LineScales("loss", "step", "loss", false, labels);
  spec["axes"] = json::array({StepAxis("training step (warmup steps first)"), Axis("left", "y", "loss")});
  spec["legends"] = json::array({LineLegend(labels)});
  spec["marks"] = Lines("loss", "loss_markers", "step", "loss", "label");
  return Chart{"run-" + std::to_string(run.run.id) + "-loss", "Loss curves",
               "The training loss of every warmup and measured step, the median over the variant's ok repeats. A "
               "technique that changes the numerics (reduced precision, other kernels) shows here as a curve that "
               "leaves the baseline's; one that does not lies on it, so each variant has its own dash and marker "
               "shape besides its colour, and curves that coincide show as one line whose dashes and markers "
               "alternate.",
               std::move(spec)};
}

std::optional<Chart> LossDriftChart(const RunReport& run) {
  if (run.drift.empty()) return std::nullopt;
  json values = json::array();
  for (const LossDrift& d : run.drift) values.push_back({{"label", d.label}, {"step", d.step}, {"delta", d.delta}});
  json spec = Spec("loss minus the baseline's loss per step", 220);
  spec["data"] = json::array({Data("drift", values), Data("drift_markers", MarkerRows(values, "label"))});
  // The loss chart's variants: each keeps its colour, dash and shape (the baseline's go unused).
  std::vector<std::string> labels;
  for (const LossCurvePoint& p : run.loss) {
    if (std::find(labels.begin(), labels.end(), p.label) == labels.end()) labels.push_back(p.label);
  }
  spec["scales"] = LineScales("drift", "step", "delta", true, labels);
  spec["axes"] = json::array({StepAxis("training step"), Axis("left", "y", "loss - baseline loss")});
  spec["legends"] = json::array({LineLegend(LabelsOf(values, "label"))});
  spec["marks"] = json::array({Mark("rule", "zero", "",
                                    {{"x", Value(0)},
                                     {"x2", Signal("width")},
                                     {"y", {{"scale", "y"}, {"value", 0}}},
                                     {"stroke", Value("#616161")}})});
  for (json& m : Lines("drift", "drift_markers", "step", "delta", "label")) spec["marks"].push_back(std::move(m));
  return Chart{"run-" + std::to_string(run.run.id) + "-drift", "Quality drift against the baseline",
               "Each variant's median loss minus the baseline's at the same step: above 0 it trains worse than the "
               "baseline, below 0 better.",
               std::move(spec)};
}

std::optional<Chart> MemoryChart(const RunReport& run) {
  if (run.memory.empty()) return std::nullopt;
  json values = json::array();
  std::vector<std::string> labels;
  for (const MemoryBar& m : run.memory) {
    const std::string name = m.metric == "peak_mem_bytes" ? "peak" : "reserved";
    values.push_back({{"label", m.label},
                      {"metric", name},
                      {"mib", m.bytes / kMiB},
                      {"bytes", m.bytes},
                      {"text", FormatBytes(static_cast<int64_t>(m.bytes))}});
    if (std::find(labels.begin(), labels.end(), m.label) == labels.end()) labels.push_back(m.label);
  }
  json spec = Spec("peak and reserved memory per variant", BandHeight(labels.size(), 40));
  spec["data"] = json::array({Data("memory", values)});
  spec["scales"] = json::array({BandScale("y", "memory", "label", "height"),
                                LinearScale("x", json::array({{{"data", "memory"}, {"field", "mib"}}}), "width", true),
                                // From the data, so that the legend lists only what was recorded ("peak" sorts first).
                                {{"name", "color"},
                                 {"type", "ordinal"},
                                 {"domain", {{"data", "memory"}, {"field", "metric"}, {"sort", true}}},
                                 {"range", json::array({"#1565c0", "#ef6c00"})}}});
  spec["axes"] = json::array({Axis("bottom", "x", "MiB"), Axis("left", "y", "")});
  spec["legends"] = json::array({{{"fill", "color"}, {"title", "memory"}, {"orient", "right"}}});
  json bars = Mark("rect", "bars", "facet",
                   {{"y", Scaled("pos", "metric")},
                    {"height", {{"scale", "pos"}, {"band", 1}}},
                    {"x", {{"scale", "x"}, {"value", 0}}},
                    {"x2", Scaled("x", "mib")},
                    {"fill", Scaled("color", "metric")},
                    {"tooltip", Signal("{'variant': datum.label, 'memory': datum.metric, 'bytes': datum.bytes}")}});
  json text = Mark("text", "values", "facet",
                   {{"y", Band("pos", "metric", 0.5)},
                    {"x", Scaled("x", "mib")},
                    {"dx", Value(4)},
                    {"baseline", Value("middle")},
                    {"fontSize", Value(10)},
                    {"text", {{"field", "text"}}}});
  spec["marks"] = json::array({{{"type", "group"},
                                {"name", "variants"},
                                {"from", {{"facet", {{"data", "memory"}, {"name", "facet"}, {"groupby", "label"}}}}},
                                {"encode", {{"enter", {{"y", Scaled("y", "label")}}}}},
                                {"signals", json::array({{{"name", "height"}, {"update", "bandwidth('y')"}}})},
                                {"scales", json::array({{{"name", "pos"},
                                                         {"type", "band"},
                                                         {"range", "height"},
                                                         {"domain", {{"data", "facet"}, {"field", "metric"}}}}})},
                                {"marks", json::array({bars, text})}}});
  return Chart{"run-" + std::to_string(run.run.id) + "-memory", "Memory",
               "peak: the device's peak during the measured steps (CUDA allocator peak; MPS current allocation; on "
               "the CPU runx's count of CPU tensor memory); reserved: what CUDA's caching allocator holds once the "
               "measured steps end (CUDA only). The maximum over the variant's ok trials.",
               std::move(spec)};
}

std::optional<Chart> FrontierChart(const RunReport& run, bool memory) {
  if (run.probes.empty()) return std::nullopt;
  const std::string y = memory ? "peak_mib" : "samples_per_s";
  json fits = json::array(), failed = json::array(), chosen = json::array();
  for (const FrontierProbe& p : run.probes) {
    json row = {{"label", p.label}, {"repeat", p.repeat}, {"probe", p.probe}, {"batch", p.batch}};
    if (!p.fits) {
      failed.push_back(std::move(row));
      continue;
    }
    const std::optional<double> v =
        memory ? (p.peak_bytes ? std::optional<double>(*p.peak_bytes / kMiB) : std::nullopt) : p.samples_per_s;
    if (!v) continue;
    row[y] = *v;
    row["step_ms"] = p.step_ms ? json(*p.step_ms) : json(nullptr);
    fits.push_back(std::move(row));
  }
  for (const FrontierChoice& c : run.chosen) {
    chosen.push_back({{"label", c.label}, {"repeat", c.repeat}, {"batch", c.batch}});
  }
  json spec = Spec(
      memory ? "auto_batch probes: peak memory by batch size" : "auto_batch probes: throughput by batch size", 260);
  spec["data"] = json::array({Data("fit_probes", fits), Data("failed_probes", failed), Data("chosen_batches", chosen)});
  spec["scales"] = json::array({{{"name", "x"},
                                 {"type", "log"},
                                 {"base", 2},
                                 {"domain",
                                  {{"fields", json::array({{{"data", "fit_probes"}, {"field", "batch"}},
                                                           {{"data", "failed_probes"}, {"field", "batch"}},
                                                           {{"data", "chosen_batches"}, {"field", "batch"}}})}}},
                                 {"range", "width"},
                                 {"padding", 24}},
                                LinearScale("y", json::array({{{"data", "fit_probes"}, {"field", y}}}), "height", true),
                                {{"name", "color"},
                                 {"type", "ordinal"},
                                 {"domain",
                                  {{"fields", json::array({{{"data", "fit_probes"}, {"field", "label"}},
                                                           {{"data", "failed_probes"}, {"field", "label"}}})}}},
                                 {"range", {{"scheme", "tableau10"}}}}});
  spec["axes"] = json::array({StepAxis("batch size (log scale)"),
                              Axis("left", "y", memory ? "peak memory of the probe (MiB)" : "samples/s of the probe")});
  spec["legends"] = json::array({{{"fill", "color"}, {"title", "variant"}, {"orient", "right"}}});
  spec["marks"] = json::array(
      {Mark("rule", "chosen", "chosen_batches",
            {{"x", Scaled("x", "batch")},
             {"y", Value(0)},
             {"y2", Signal("height")},
             {"stroke", Value("#424242")},
             {"strokeDash", {{"value", json::array({5, 4})}}},
             {"tooltip", Signal("{'variant': datum.label, 'repeat': datum.repeat, 'chosen batch': datum.batch}")}}),
       Mark("symbol", "probes", "fit_probes",
            {{"x", Scaled("x", "batch")},
             {"y", Scaled("y", y)},
             {"size", Value(50)},
             {"fill", Scaled("color", "label")},
             {"fillOpacity", Value(0.8)},
             {"tooltip", Signal("{'variant': datum.label, 'repeat': datum.repeat, 'probe': datum.probe, 'batch': "
                                "datum.batch, '" +
                                y + "': format(datum." + y + ", '.4~g')}")}}),
       Mark("symbol", "failed", "failed_probes",
            {{"x", Scaled("x", "batch")},
             {"y", Signal("height")},
             {"shape", Value("M-1,-1L1,1M-1,1L1,-1")},
             {"size", Value(90)},
             {"stroke", Value("#c62828")},
             {"strokeWidth", Value(2.5)},
             {"tooltip", Signal("{'variant': datum.label, 'repeat': datum.repeat, 'probe': datum.probe, 'batch': "
                                "datum.batch, 'fits': 'no (out of memory)'}")}})});
  const std::string id = "run-" + std::to_string(run.run.id) + (memory ? "-frontier-memory" : "-frontier");
  return Chart{
      id, memory ? "auto_batch frontier: memory" : "auto_batch frontier: throughput",
      std::string(memory ? "The peak memory of each probe that fit" : "The throughput of each probe that fit") +
          " (one full training step with every technique applied, then timed steps), by batch size; red "
          "crosses on the axis: probes that ran out of memory; dashed: the batch each trial chose.",
      std::move(spec)};
}

std::vector<Chart> RunCharts(const RunReport& run) {
  std::vector<Chart> out;
  for (std::optional<Chart> c : {SpeedupChart(run), StepTimeChart(run), LossChart(run), LossDriftChart(run),
                                 MemoryChart(run), FrontierChart(run, false), FrontierChart(run, true)}) {
    if (c) out.push_back(std::move(*c));
  }
  return out;
}

}  // namespace runx::report
