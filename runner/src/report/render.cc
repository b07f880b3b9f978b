// RenderReport: the variant table printed when a sweep ends.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/report.h"

namespace runx::report {
namespace {

constexpr const char* kNone = "-";
constexpr const char* kGap = "  ";

// Display width of UTF-8 text: its code points (the table's texts have no wide characters).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string PadRight(const std::string& s, size_t width) {
  const size_t w = Width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

std::string PadLeft(const std::string& s, size_t width) {
  const size_t w = Width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

// Milliseconds: two decimals, or three significant digits below 1 ms.
std::string Ms(double ms) {
  return std::fabs(ms) >= 1 ? fmt::format("{:.2f}", ms) : fmt::format("{:.3g}", ms);
}

std::string Bytes(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (std::fabs(value) >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

template <typename T, typename F>
std::string Or(const std::optional<T>& value, F format) {
  return value ? format(*value) : std::string(kNone);
}

// A value right-aligned to its column's widest, then a range: "  55.72 (55.68-55.75)".
struct Composite {
  std::string head;   ///< right-aligned part
  std::string tail;   ///< follows it, e.g. " (1.2-1.3)"
};

std::vector<std::string> AlignComposites(const std::vector<Composite>& cells) {
  size_t head = 0;
  for (const Composite& c : cells) head = std::max(head, Width(c.head));
  std::vector<std::string> out;
  for (const Composite& c : cells) out.push_back(PadLeft(c.head, head) + c.tail);
  return out;
}

Composite StepCell(const VariantRow& r) {
  if (!r.step_ms_median) return {kNone, ""};
  return {Ms(*r.step_ms_median), fmt::format(" ({}-{})", Ms(*r.step_ms_p10), Ms(*r.step_ms_p90))};
}

Composite SpeedupCell(const VariantRow& r) {
  if (r.is_baseline) return {r.samples_per_s ? "1.00" : kNone, ""};
  if (!r.speedup) return {kNone, ""};
  return {fmt::format("{:.2f}", r.speedup->estimate),
          fmt::format(" ({:.2f}-{:.2f})", r.speedup->low, r.speedup->high)};
}

std::string Notes(const VariantRow& r) {
  std::vector<std::string> notes;
  if (r.speedup && !r.speedup->significant) notes.emplace_back("not significant");
  std::vector<std::string> failed;
  for (const auto& [status, n] : r.statuses) {
    if (status != TrialStatus::kOk) failed.push_back(fmt::format("{} {}", n, Name(status)));
  }
  if (!failed.empty()) notes.push_back(fmt::format("{}", fmt::join(failed, ", ")));
  return fmt::format("{}", fmt::join(notes, "; "));
}

struct Column {
  std::string header;
  bool right = false;
  std::vector<std::string> cells;
};

}  // namespace

std::string RenderReport(const std::vector<VariantRow>& rows) {
  if (rows.empty()) return "";
  std::vector<Column> columns = {
      {"variant", false, {}},   {"trials", false, {}}, {"step ms (p10-p90)", false, {}},
      {"samples/s", true, {}},  {"peak mem", true, {}}, {"loss", true, {}},
      {"acc", true, {}},        {"Δacc", true, {}},    {"speedup (95% CI)", false, {}},
      {"", false, {}},
  };
  std::vector<Composite> steps;
  std::vector<Composite> speedups;
  for (const VariantRow& r : rows) {
    steps.push_back(StepCell(r));
    speedups.push_back(SpeedupCell(r));
  }
  const std::vector<std::string> step_cells = AlignComposites(steps);
  const std::vector<std::string> speedup_cells = AlignComposites(speedups);
  for (size_t i = 0; i < rows.size(); ++i) {
    const VariantRow& r = rows[i];
    const auto fixed = [](int decimals) {
      return [decimals](double v) { return fmt::format("{:.{}f}", v, decimals); };
    };
    columns[0].cells.push_back(r.label);
    columns[1].cells.push_back(fmt::format("{}/{}", r.ok_trials, r.trials));
    columns[2].cells.push_back(step_cells[i]);
    columns[3].cells.push_back(Or(r.samples_per_s, fixed(1)));
    columns[4].cells.push_back(Or(r.peak_mem_bytes, Bytes));
    columns[5].cells.push_back(Or(r.final_loss, fixed(4)));
    columns[6].cells.push_back(Or(r.accuracy, fixed(4)));
    columns[7].cells.push_back(
        Or(r.accuracy_delta, [](double v) { return fmt::format("{:+.4f}", v); }));
    columns[8].cells.push_back(speedup_cells[i]);
    columns[9].cells.push_back(Notes(r));
  }
  std::vector<size_t> widths;
  for (const Column& c : columns) {
    size_t w = Width(c.header);
    for (const std::string& cell : c.cells) w = std::max(w, Width(cell));
    widths.push_back(w);
  }
  const auto line = [&](auto cell_of) {
    std::string out;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) out += kGap;
      const std::string& cell = cell_of(columns[c]);
      out += columns[c].right ? PadLeft(cell, widths[c]) : PadRight(cell, widths[c]);
    }
    out.erase(out.find_last_not_of(' ') + 1);
    return out + "\n";
  };
  std::string out = line([](const Column& c) -> const std::string& { return c.header; });
  for (size_t i = 0; i < rows.size(); ++i) {
    out += line([i](const Column& c) -> const std::string& { return c.cells[i]; });
  }
  return out;
}

}  // namespace runx::report
