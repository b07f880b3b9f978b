// The page's tables and escaping: HtmlTable, ComparisonTable, EnvironmentRows, EscapeHtml, ScriptJson.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "report/compare.h"
#include "report/html.h"

namespace runx::report {

std::string EscapeHtml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ScriptJson(const nlohmann::ordered_json& value) {
  const std::string text = value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  // '<' appears in JSON text only inside strings, where \u003c is the same character.
  for (const char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string HtmlTable(const TextTable& table, const std::string& css_class, const CellClass& cell_class) {
  const auto cell = [&](const char* tag, size_t column, const std::string& text, std::string classes) {
    if (column < table.right.size() && table.right[column]) classes = classes.empty() ? "num" : "num " + classes;
    const std::string attribute = classes.empty() ? "" : fmt::format(" class=\"{}\"", EscapeHtml(classes));
    return fmt::format("<{}{}>{}</{}>", tag, attribute, EscapeHtml(text), tag);
  };
  std::string out = css_class.empty() ? "<table>" : fmt::format("<table class=\"{}\">", EscapeHtml(css_class));
  out += "<thead><tr>";
  for (size_t c = 0; c < table.headers.size(); ++c) out += cell("th", c, table.headers[c], "");
  out += "</tr></thead><tbody>\n";
  for (size_t r = 0; r < table.rows.size(); ++r) {
    out += "<tr>";
    for (size_t c = 0; c < table.rows[r].size(); ++c) {
      out += cell("td", c, table.rows[r][c], cell_class ? cell_class(r, c) : "");
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string ComparisonTable(const Comparison& comparison) {
  const TextTable table = CompareTextTable(comparison);
  const auto verdict = std::find(table.headers.begin(), table.headers.end(), "verdict");
  const size_t column = static_cast<size_t>(verdict - table.headers.begin());
  // One row per compared variant, in order.
  return HtmlTable(table, "comparison", [&](size_t row, size_t c) -> std::string {
    if (c != column || row >= comparison.variants.size() || !comparison.variants[row].ratio) return "";
    const Change change = comparison.variants[row].ratio->change;
    return change == Change::kFaster || change == Change::kSlower ? ChangeName(change) : "";
  });
}

std::vector<std::pair<std::string, std::string>> EnvironmentRows(const store::RunOverview& run) {
  const auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  std::vector<std::pair<std::string, std::string>> rows = {
      {"run", RunName(run)},
      {"tag", or_dash(run.tag)},
      {"note", or_dash(run.note)},
      {"your commit (the experiment's repository)", UserCommitName(run)},
      {"experiment", run.experiment},
      {"status", run.status},
      {"started", or_dash(run.started_at)},
      {"finished", or_dash(run.finished_at)},
      {"host", or_dash(run.host)},
      {"devices", run.devices.empty() ? "-" : fmt::format("{}", fmt::join(run.devices, ", "))},
      {"build", BuildName(run) + (run.build_type.empty() ? "" : " " + run.build_type)},
      {"runx version", or_dash(run.runx_version)},
      {"runx build (binary and plugins)", or_dash(run.runx_build)},
      {"git sha", or_dash(run.git_sha)},
      {"git dirty", run.git_dirty ? (*run.git_dirty ? "yes" : "no") : "unknown"},
      {"platforms (LibTorch, CUDA, cuDNN, device)",
       run.platforms.empty() ? "-" : fmt::format("{}", fmt::join(run.platforms, ", "))},
      {"overrides (--set)", run.overrides_json},
  };
  for (const auto& [key, value] : run.environment) rows.emplace_back(key, value);
  return rows;
}

}  // namespace runx::report
