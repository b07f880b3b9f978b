#include "report/history.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

namespace runx::report {
namespace {

CompareSide SideOf(store::Store& store, int64_t run_id) {
  CompareSide side;
  side.run_id = run_id;
  side.trials = store.ReadRunTrials(run_id);
  return side;
}

/// The platforms `label`'s trials of `side` ran on.
std::set<std::string> Platforms(const CompareSide& side, const std::string& label) {
  std::set<std::string> out;
  for (const store::RunTrial& t : side.trials) {
    if (t.label == label) out.insert(t.platform_hash);
  }
  return out;
}

std::string ChangeWord(const HistoryVariant& v) {
  if (!v.vs_previous) return "new";
  return v.vs_previous->ratio ? ChangeName(v.vs_previous->ratio->change) : "";
}

}  // namespace

std::vector<HistoryRun> BuildHistory(store::Store& store, const std::vector<int64_t>& run_ids, size_t shown,
                                     const CompareOptions& options) {
  std::map<size_t, CompareSide> sides;  // by position in run_ids, read once
  const auto side = [&](size_t i) -> const CompareSide& {
    auto it = sides.find(i);
    if (it == sides.end()) it = sides.emplace(i, SideOf(store, run_ids[i])).first;
    return it->second;
  };
  std::vector<HistoryRun> out;
  for (size_t i = 0; i < run_ids.size() && i < shown; ++i) {
    HistoryRun h;
    h.run = store::ReadRunOverview(store, run_ids[i]);
    if (i + 1 < run_ids.size()) h.run_below = run_ids[i + 1];
    for (VariantRow& row : SummarizeFigures(side(i).trials)) {
      HistoryVariant v;
      v.figures = std::move(row);
      h.variants.push_back(std::move(v));
    }
    // Older runs, nearest first, until every variant has its comparison: each against the
    // variants still without one (the bootstrap runs for those only).
    std::set<std::string> open;
    for (const HistoryVariant& v : h.variants) open.insert(v.figures.label);
    const SpreadBook spreads = SpreadBook::Read(store, side(i).trials);
    for (size_t j = i + 1; j < run_ids.size() && !open.empty(); ++j) {
      const CompareSide& here = side(i);
      CompareSide current;
      current.run_id = here.run_id;
      std::copy_if(here.trials.begin(), here.trials.end(), std::back_inserter(current.trials),
                   [&](const store::RunTrial& t) { return open.count(t.label) > 0; });
      const Comparison vs = Compare(side(j), current, options, spreads);
      for (const ComparedVariant& c : vs.variants) {
        for (HistoryVariant& v : h.variants) {
          if (c.label_b != v.figures.label || !open.count(v.figures.label)) continue;
          v.vs_previous = c;
          v.previous_run = run_ids[j];
          v.platform_changed = Platforms(side(i), c.label_b) != Platforms(side(j), c.label_a);
          open.erase(v.figures.label);
        }
      }
    }
    sides.erase(i);  // newer runs are not read again
    out.push_back(std::move(h));
  }
  return out;
}

std::string ChangeCell(const HistoryVariant& v, std::optional<int64_t> run_below) {
  if (!v.vs_previous) return "new";
  const std::string against =
      run_below && v.previous_run && *v.previous_run != *run_below ? fmt::format(" (run {})", *v.previous_run) : "";
  const auto& r = v.vs_previous->ratio;
  if (!r) return "-" + against;
  const std::string pct = fmt::format("{:+.1f}%", (r->estimate - 1) * 100);
  switch (r->change) {
    case Change::kFaster:
      return "▲ " + pct + against;
    case Change::kSlower:
      return "▼ " + pct + against;
    case Change::kNoChange:
    case Change::kInconclusive:
      return pct + against;
  }
  return pct + against;
}

TextTable HistoryTextTable(const std::vector<HistoryRun>& runs) {
  TextTable t;
  t.headers = {"run",
               "tag",
               "commit",
               "runx",
               "date",
               "host",
               "device",
               "status",
               "variant",
               "samples/s",
               "step ms (p10-p90)",
               "vs previous",
               ""};
  t.right = {true, false, false, false, false, false, false, false, false, true, false, false, false};
  for (const HistoryRun& h : runs) {
    std::vector<std::string> head = {RunName(h.run),
                                     h.run.tag.empty() ? "-" : h.run.tag,
                                     UserCommitName(h.run),
                                     BuildName(h.run),
                                     ShortDate(h.run.started_at),
                                     h.run.host,
                                     fmt::format("{}", fmt::join(h.run.devices, ",")),
                                     h.run.status};
    if (h.variants.empty()) {
      head.insert(head.end(), {"-", "-", "-", "-", ""});
      t.rows.push_back(head);
      continue;
    }
    bool first = true, first_note = true;
    for (const HistoryVariant& v : h.variants) {
      std::vector<std::string> row = first ? head : std::vector<std::string>(head.size(), "");
      first = false;
      const VariantRow& f = v.figures;
      row.push_back(f.label);
      row.push_back(f.samples_per_s ? fmt::format("{:.1f}", *f.samples_per_s) : "-");
      row.push_back(f.step_ms_median ? fmt::format("{} ({}-{})", FormatMs(*f.step_ms_median), FormatMs(*f.step_ms_p10),
                                                   FormatMs(*f.step_ms_p90))
                                     : "-");
      row.push_back(ChangeCell(v, h.run_below));
      std::vector<std::string> notes;
      if (first_note && !h.run.note.empty()) notes.push_back("note: " + h.run.note);
      first_note = false;
      if (f.ok_trials != f.trials) notes.push_back(f.status_summary);
      if (f.noise.unstable()) notes.emplace_back("unstable");
      if (v.platform_changed) notes.emplace_back("other platform");
      if (v.vs_previous && v.vs_previous->ratio) {
        const Ratio& r = *v.vs_previous->ratio;
        if (r.change == Change::kInconclusive) {
          notes.emplace_back(r.interval ? "inconclusive" : "inconclusive: spread unknown");
        }
        if (!r.caution.empty()) notes.emplace_back("busy machine");
      }
      row.push_back(fmt::format("{}", fmt::join(notes, "; ")));
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

DataTable HistoryDataTable(const std::vector<HistoryRun>& runs) {
  DataTable t;
  t.columns = {"run_id",        "runs",
               "tag",           "note",
               "user_git_sha",  "user_git_dirty",
               "git_sha",       "git_dirty",
               "runx_build",    "started_at",
               "host",          "devices",
               "status",        "label",
               "ok_trials",     "trials",
               "samples_per_s", "step_ms_median",
               "step_ms_p10",   "step_ms_p90",
               "previous_run",  "ratio",
               "ratio_ci_low",  "ratio_ci_high",
               "change",        "why",
               "unstable",      "platform_changed"};
  const auto flag = [](const std::optional<bool>& b) { return b ? store::Value(int64_t{*b ? 1 : 0}) : store::Value{}; };
  for (const HistoryRun& h : runs) {
    const std::vector<store::Value> head = {h.run.id,           fmt::format("{}", fmt::join(h.run.runs, ",")),
                                            h.run.tag,          h.run.note,
                                            h.run.user_git_sha, flag(h.run.user_git_dirty),
                                            h.run.git_sha,      flag(h.run.git_dirty),
                                            h.run.runx_build,   h.run.started_at,
                                            h.run.host,         fmt::format("{}", fmt::join(h.run.devices, ",")),
                                            h.run.status};
    for (const HistoryVariant& v : h.variants) {
      std::vector<store::Value> row = head;
      const VariantRow& f = v.figures;
      store::Value ratio, low, high, why;
      if (v.vs_previous && v.vs_previous->ratio) {
        const Ratio& r = *v.vs_previous->ratio;
        ratio = r.estimate;
        why = r.why;
        if (r.interval) {
          low = r.interval->low;
          high = r.interval->high;
        }
      }
      const std::vector<store::Value> tail = {f.label,
                                              int64_t{f.ok_trials},
                                              int64_t{f.trials},
                                              NumberOrNull(f.samples_per_s),
                                              NumberOrNull(f.step_ms_median),
                                              NumberOrNull(f.step_ms_p10),
                                              NumberOrNull(f.step_ms_p90),
                                              v.previous_run ? store::Value(*v.previous_run) : store::Value{},
                                              ratio,
                                              low,
                                              high,
                                              ChangeWord(v),
                                              why,
                                              int64_t{f.noise.unstable() ? 1 : 0},
                                              int64_t{v.platform_changed ? 1 : 0}};
      row.insert(row.end(), tail.begin(), tail.end());
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

std::string RenderHistory(const std::vector<HistoryRun>& runs, const std::string& experiment, OutputFormat format,
                          double threshold) {
  switch (format) {
    case OutputFormat::kCsv:
      return RenderCsv(HistoryDataTable(runs));
    case OutputFormat::kJson:
      return ToJson(HistoryDataTable(runs)).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
             "\n";
    case OutputFormat::kTable:
    case OutputFormat::kMarkdown:
      break;
  }
  const TextTable table = HistoryTextTable(runs);
  std::string out = fmt::format(
      "{}: {} run{}, newest first; ▲/▼: faster/slower than the same configuration in the run below (or the "
      "run named) beyond ±{:g}% and the 95% interval\n\n",
      experiment, runs.size(), runs.size() == 1 ? "" : "s", threshold * 100);
  if (table.rows.empty()) return fmt::format("no run of experiment '{}'\n", experiment);
  return out + (format == OutputFormat::kMarkdown ? RenderMarkdown(table) : RenderText(table));
}

}  // namespace runx::report
