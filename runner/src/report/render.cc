// RenderReport: the variant table printed when a run ends, its noise warnings and its exports.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "report/report.h"

namespace runx::report {
namespace {

constexpr const char* kNone = "-";

std::string PadLeft(const std::string& s, size_t width) {
  const size_t w = DisplayWidth(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

template <typename T, typename F>
std::string Or(const std::optional<T>& value, F format) {
  return value ? format(*value) : std::string(kNone);
}

// A value right-aligned to its column's widest, then a range: "  55.72 (55.68-55.75)".
struct Composite {
  std::string head;  ///< right-aligned part
  std::string tail;  ///< follows it, e.g. " (1.2-1.3)"
};

std::vector<std::string> AlignComposites(const std::vector<Composite>& cells) {
  size_t head = 0;
  for (const Composite& c : cells) head = std::max(head, DisplayWidth(c.head));
  std::vector<std::string> out;
  for (const Composite& c : cells) out.push_back(PadLeft(c.head, head) + c.tail);
  return out;
}

Composite StepCell(const VariantRow& r) {
  if (!r.step_ms_median) return {kNone, ""};
  return {FormatMs(*r.step_ms_median), fmt::format(" ({}-{})", FormatMs(*r.step_ms_p10), FormatMs(*r.step_ms_p90))};
}

Composite SpeedupCell(const VariantRow& r) {
  if (r.is_baseline) return {r.samples_per_s ? "1.00" : kNone, ""};
  if (!r.speedup) return {kNone, ""};
  const Ratio& s = *r.speedup;
  const std::string interval = s.interval ? fmt::format(" ({:.2f}-{:.2f})", s.interval->low, s.interval->high) : "";
  return {fmt::format("{:.2f}", s.estimate), interval + " " + ChangeName(s.change)};
}

std::string Notes(const VariantRow& r) {
  std::vector<std::string> notes;
  if (r.speedup && !r.speedup->caution.empty()) notes.emplace_back("busy machine");
  if (r.noise.unstable()) notes.emplace_back("unstable");
  std::vector<std::string> failed;
  for (const auto& [status, n] : r.statuses) {
    if (status != TrialStatus::kOk) failed.push_back(fmt::format("{} {}", n, Name(status)));
  }
  if (!failed.empty()) notes.push_back(fmt::format("{}", fmt::join(failed, ", ")));
  return fmt::format("{}", fmt::join(notes, "; "));
}

}  // namespace

TextTable ReportTextTable(const std::vector<VariantRow>& rows) {
  TextTable t;
  t.headers = {"variant", "trials", "step ms (p10-p90)", "samples/s", "peak mem", "loss",
               "acc",     "Δacc",   "speedup (95% CI)",  ""};
  t.right = {false, false, false, true, true, true, true, true, false, false};
  std::vector<Composite> steps;
  std::vector<Composite> speedups;
  for (const VariantRow& r : rows) {
    steps.push_back(StepCell(r));
    speedups.push_back(SpeedupCell(r));
  }
  const std::vector<std::string> step_cells = AlignComposites(steps);
  const std::vector<std::string> speedup_cells = AlignComposites(speedups);
  const auto fixed = [](int decimals) { return [decimals](double v) { return fmt::format("{:.{}f}", v, decimals); }; };
  for (size_t i = 0; i < rows.size(); ++i) {
    const VariantRow& r = rows[i];
    t.rows.push_back(
        {r.label, fmt::format("{}/{}", r.ok_trials, r.trials), step_cells[i], Or(r.samples_per_s, fixed(1)),
         Or(r.peak_mem_bytes, FormatBytes), Or(r.final_loss, fixed(4)), Or(r.accuracy, fixed(4)),
         Or(r.accuracy_delta, [](double v) { return fmt::format("{:+.4f}", v); }), speedup_cells[i], Notes(r)});
  }
  // Energy where a variant was metered (a GPU through NVML, a CPU with readable RAPL counters),
  // after the memory: joules per sample and the average draw while measuring.
  if (std::any_of(rows.begin(), rows.end(), [](const VariantRow& r) { return r.joules_per_sample.has_value(); })) {
    const auto at = static_cast<std::ptrdiff_t>(5);
    t.headers.insert(t.headers.begin() + at, {"J/sample", "W"});
    t.right.insert(t.right.begin() + at, {true, true});
    for (size_t i = 0; i < rows.size(); ++i)
      t.rows[i].insert(t.rows[i].begin() + at,
                       {Or(rows[i].joules_per_sample, FormatEnergy), Or(rows[i].power_w, FormatEnergy)});
  }
  return t;
}

std::string RenderReport(const std::vector<VariantRow>& rows) { return RenderText(ReportTextTable(rows)); }

DataTable ReportDataTable(const std::vector<VariantRow>& rows) {
  DataTable t;
  t.columns = {"label",       "is_baseline",    "trials",        "ok_trials",         "step_ms_median",
               "step_ms_p10", "step_ms_p90",    "samples_per_s", "peak_mem_bytes",    "final_loss",
               "accuracy",    "accuracy_delta", "speedup",       "speedup_ci_low",    "speedup_ci_high",
               "significant", "verdict",        "why",           "speedup_se",        "speedup_df",
               "unstable",    "noise",          "statuses",      "joules_per_sample", "power_w"};
  for (const VariantRow& r : rows) {
    std::vector<std::string> statuses;
    for (const auto& [status, n] : r.statuses) statuses.push_back(fmt::format("{} {}", n, Name(status)));
    store::Value speedup, low, high, significant, verdict, why, spread, df;
    if (r.is_baseline && r.samples_per_s) speedup = 1.0;
    if (r.speedup) {
      const Ratio& s = *r.speedup;
      speedup = s.estimate;
      if (s.interval) {
        low = s.interval->low;
        high = s.interval->high;
        significant = int64_t{s.significant() ? 1 : 0};
      }
      verdict = std::string(ChangeName(s.change));
      why = s.why;
      if (s.error.known()) {
        spread = s.error.se;
        df = int64_t{s.error.df};
      }
    }
    t.rows.push_back({r.label,
                      int64_t{r.is_baseline ? 1 : 0},
                      int64_t{r.trials},
                      int64_t{r.ok_trials},
                      NumberOrNull(r.step_ms_median),
                      NumberOrNull(r.step_ms_p10),
                      NumberOrNull(r.step_ms_p90),
                      NumberOrNull(r.samples_per_s),
                      r.peak_mem_bytes ? store::Value(*r.peak_mem_bytes) : store::Value{},
                      NumberOrNull(r.final_loss),
                      NumberOrNull(r.accuracy),
                      NumberOrNull(r.accuracy_delta),
                      speedup,
                      low,
                      high,
                      significant,
                      verdict,
                      why,
                      spread,
                      df,
                      int64_t{r.noise.unstable() ? 1 : 0},
                      fmt::format("{}", fmt::join(r.noise.reasons, "; ")),
                      fmt::format("{}", fmt::join(statuses, ", ")),
                      NumberOrNull(r.joules_per_sample),
                      NumberOrNull(r.power_w)});
  }
  return t;
}

std::string RenderNoise(const std::vector<VariantRow>& rows) {
  std::string out;
  // One process a variant and no spread from earlier runs: one line says so for every variant.
  std::vector<std::string> unknown;
  for (const VariantRow& r : rows) {
    if (r.speedup && r.speedup->change == Change::kInconclusive && !r.speedup->error.known() &&
        r.speedup->processes_a == 1 && r.speedup->processes_b == 1) {
      unknown.push_back(r.label);
    }
  }
  if (!unknown.empty()) {
    out += fmt::format("inconclusive: {}: 1 process each: run-to-run spread unknown; repeats: {} would measure it\n",
                       fmt::join(unknown, ", "), kRecommendedRepeats);
  }
  for (const VariantRow& r : rows) {
    if (!r.speedup) continue;
    const Ratio& s = *r.speedup;
    if (s.change == Change::kInconclusive && std::find(unknown.begin(), unknown.end(), r.label) == unknown.end()) {
      out += fmt::format("inconclusive: {}: {}", r.label, s.why);
      if (s.repeats_needed) {
        out += fmt::format("; ~{} repeats would resolve {:g}% (now {})", *s.repeats_needed, kDefaultThreshold * 100,
                           std::min(s.processes_a, s.processes_b));
      }
      out += "\n";
    }
    if (!s.caution.empty()) out += fmt::format("{}: {}\n", r.label, s.caution);
  }
  for (const VariantRow& r : rows) {
    if (r.noise.unstable()) out += fmt::format("noise: {}: {}\n", r.label, fmt::join(r.noise.reasons, "; "));
  }
  return out;
}

std::string ExportReport(const std::vector<VariantRow>& rows, OutputFormat format, const ReportContext& context) {
  switch (format) {
    case OutputFormat::kTable:
      return RenderReport(rows) + RenderNoise(rows);
    case OutputFormat::kMarkdown: {
      std::string out = RenderMarkdown(ReportTextTable(rows));
      const std::string noise = RenderNoise(rows);
      if (!noise.empty()) out += "\n";
      for (size_t start = 0; start < noise.size();) {  // each line a list item
        const size_t end = noise.find('\n', start);
        out += "- " + noise.substr(start, end - start + 1);
        start = end + 1;
      }
      return out;
    }
    case OutputFormat::kCsv:
      return RenderCsv(ReportDataTable(rows));
    case OutputFormat::kJson: {
      nlohmann::ordered_json doc = {
          {"run_id", context.run_id}, {"experiment", context.experiment}, {"variants", ToJson(ReportDataTable(rows))}};
      return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    }
  }
  return "";
}

}  // namespace runx::report
