#include "report/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

namespace runx::report {
namespace {

struct Variant {
  std::string label;
  bool is_baseline = false;
  std::vector<const store::RunTrial*> trials;  ///< in repeat order, then id
};

// The variants of a run, in first-trial order (the trials come ordered by order_index, then id).
std::vector<Variant> GroupVariants(const std::vector<store::RunTrial>& trials) {
  std::vector<Variant> variants;
  std::map<std::string, size_t> index;
  for (const store::RunTrial& rt : trials) {
    auto [it, inserted] = index.emplace(rt.label, variants.size());
    if (inserted) variants.push_back({rt.label, false, {}});
    Variant& v = variants[it->second];
    v.is_baseline = v.is_baseline || rt.is_baseline;
    v.trials.push_back(&rt);
  }
  for (Variant& v : variants) {
    std::stable_sort(v.trials.begin(), v.trials.end(), [](const store::RunTrial* a, const store::RunTrial* b) {
      return std::tie(a->repeat_index, a->trial_id) < std::tie(b->repeat_index, b->trial_id);
    });
  }
  return variants;
}

void CountStatuses(const Variant& v, VariantRow& row) {
  std::map<TrialStatus, int> counts;
  for (const store::RunTrial* t : v.trials) ++counts[t->status];
  std::vector<std::string> parts;
  for (const TrialStatus status : kTrialStatuses) {
    const auto it = counts.find(status);
    if (it == counts.end()) continue;
    row.statuses.emplace_back(status, it->second);
    parts.push_back(fmt::format("{} {}", it->second, Name(status)));
  }
  row.trials = static_cast<int>(v.trials.size());
  row.ok_trials = counts.count(TrialStatus::kOk) ? counts[TrialStatus::kOk] : 0;
  if (row.ok_trials != row.trials) row.status_summary = fmt::format("{}", fmt::join(parts, ", "));
}

VariantRow Figures(const Variant& v) {
  VariantRow row;
  row.label = v.label;
  row.is_baseline = v.is_baseline;
  CountStatuses(v, row);
  const std::vector<Repeat> repeats = RepeatsOf(Processes(v.trials));
  std::vector<double> step_ms;
  for (const Repeat& r : repeats) {
    for (const StepSample& s : r) step_ms.push_back(s.wall_ms);
  }
  if (!step_ms.empty()) {
    row.step_ms_median = Percentile(step_ms, 0.5);
    row.step_ms_p10 = Percentile(step_ms, 0.1);
    row.step_ms_p90 = Percentile(std::move(step_ms), 0.9);
    row.samples_per_s = Throughput(repeats);
  }
  row.noise = CheckNoise(repeats);
  for (const store::RunTrial* t : v.trials) {
    if (t->status != TrialStatus::kOk || !t->peak_mem_bytes) continue;
    const auto bytes = static_cast<int64_t>(*t->peak_mem_bytes);
    row.peak_mem_bytes = std::max(row.peak_mem_bytes.value_or(bytes), bytes);
  }
  row.final_loss = MedianOfOk(v.trials, &store::RunTrial::final_loss);
  row.accuracy = MedianOfOk(v.trials, &store::RunTrial::accuracy);
  row.joules_per_sample = MedianOfOk(v.trials, &store::RunTrial::joules_per_sample);
  row.power_w = MedianOfOk(v.trials, &store::RunTrial::power_w);
  return row;
}

}  // namespace

std::vector<VariantRow> Summarize(store::Store& store, int64_t run_id) {
  const std::vector<store::RunTrial> trials = store.ReadRunTrials(run_id);
  return Summarize(trials, SpreadBook::Read(store, trials));
}

std::vector<VariantRow> SummarizeFigures(const std::vector<store::RunTrial>& trials) {
  const std::vector<Variant> variants = GroupVariants(trials);
  std::vector<VariantRow> rows;
  for (const Variant& v : variants) rows.push_back(Figures(v));
  const auto base = std::find_if(variants.begin(), variants.end(), [](const Variant& v) { return v.is_baseline; });
  if (base == variants.end()) return rows;
  const size_t b = static_cast<size_t>(base - variants.begin());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i != b && rows[i].accuracy && rows[b].accuracy) rows[i].accuracy_delta = *rows[i].accuracy - *rows[b].accuracy;
  }
  return rows;
}

std::vector<VariantRow> Summarize(const std::vector<store::RunTrial>& trials, const SpreadBook& spreads) {
  std::vector<VariantRow> rows = SummarizeFigures(trials);
  const std::vector<Variant> variants = GroupVariants(trials);
  const auto base = std::find_if(variants.begin(), variants.end(), [](const Variant& v) { return v.is_baseline; });
  if (base == variants.end()) return rows;
  const size_t b = static_cast<size_t>(base - variants.begin());
  if (Processes(base->trials).empty() || !(rows[b].samples_per_s.value_or(0) > 0)) return rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == b || Processes(variants[i].trials).empty()) continue;
    rows[i].speedup = JudgeRatio(base->trials, variants[i].trials, spreads, kDefaultThreshold);
  }
  return rows;
}

std::vector<store::VariantStatsRow> ToVariantStats(const std::vector<VariantRow>& rows) {
  std::vector<store::VariantStatsRow> out;
  for (const VariantRow& r : rows) {
    store::VariantStatsRow s;
    s.label = r.label;
    s.is_baseline = r.is_baseline;
    s.trials = r.trials;
    s.ok_trials = r.ok_trials;
    s.step_ms_median = r.step_ms_median;
    s.step_ms_p10 = r.step_ms_p10;
    s.step_ms_p90 = r.step_ms_p90;
    s.samples_per_s = r.samples_per_s;
    s.accuracy_delta = r.accuracy_delta;
    if (r.is_baseline && r.samples_per_s) s.speedup = 1.0;
    if (r.speedup) {
      s.speedup = r.speedup->estimate;
      if (r.speedup->interval) {
        s.speedup_ci_low = r.speedup->interval->low;
        s.speedup_ci_high = r.speedup->interval->high;
        s.significant = r.speedup->significant();
      }
      s.verdict = ChangeName(r.speedup->change);
      if (r.speedup->error.known()) {
        s.speedup_se = r.speedup->error.se;
        s.speedup_df = r.speedup->error.df;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

void WriteVariantStats(store::Store& store, int64_t run_id, const std::vector<VariantRow>& rows) {
  store.RecordVariantStats(run_id, ToVariantStats(rows));
}

}  // namespace runx::report
