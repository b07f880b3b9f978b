#include "report/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

namespace runx::report {
namespace {

struct Trial {
  int64_t id = 0;
  int repeat_index = 0;
  TrialStatus status = TrialStatus::kOk;
  Repeat steps;  ///< measured steps (ok trials only)
  std::optional<double> peak_mem_bytes;
  std::optional<double> final_loss;
  std::optional<double> accuracy;
};

struct Variant {
  std::string label;
  bool is_baseline = false;
  std::vector<Trial> trials;
};

// The variants of a run, in first-trial order (the trials come ordered by order_index, then id).
std::vector<Variant> GroupVariants(const std::vector<store::RunTrial>& trials) {
  std::vector<Variant> variants;
  std::map<std::string, size_t> index;
  for (const store::RunTrial& rt : trials) {
    Trial t;
    t.id = rt.trial_id;
    t.status = rt.status;
    t.repeat_index = rt.repeat_index;
    for (const auto& [wall_ms, samples] : rt.measured_steps) t.steps.push_back({wall_ms, samples});
    t.peak_mem_bytes = rt.peak_mem_bytes;
    t.final_loss = rt.final_loss;
    t.accuracy = rt.accuracy;
    auto [it, inserted] = index.emplace(rt.label, variants.size());
    if (inserted) variants.push_back({rt.label, false, {}});
    Variant& v = variants[it->second];
    v.is_baseline = v.is_baseline || rt.is_baseline;
    v.trials.push_back(std::move(t));
  }
  for (Variant& v : variants) {
    std::stable_sort(v.trials.begin(), v.trials.end(), [](const Trial& a, const Trial& b) {
      return std::tie(a.repeat_index, a.id) < std::tie(b.repeat_index, b.id);
    });
  }
  return variants;
}

// The ok trials' measured steps, one repeat per trial that has any.
std::vector<Repeat> OkRepeats(const Variant& v) {
  std::vector<Repeat> repeats;
  for (const Trial& t : v.trials) {
    if (t.status == TrialStatus::kOk && !t.steps.empty()) repeats.push_back(t.steps);
  }
  return repeats;
}

std::optional<double> MedianOf(const Variant& v, std::optional<double> Trial::*field) {
  std::vector<double> values;
  for (const Trial& t : v.trials) {
    if (t.status == TrialStatus::kOk && t.*field) values.push_back(*(t.*field));
  }
  if (values.empty()) return std::nullopt;
  return Median(std::move(values));
}

void CountStatuses(const Variant& v, VariantRow& row) {
  std::map<TrialStatus, int> counts;
  for (const Trial& t : v.trials) ++counts[t.status];
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
  const std::vector<Repeat> repeats = OkRepeats(v);
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
  for (const Trial& t : v.trials) {
    if (t.status != TrialStatus::kOk || !t.peak_mem_bytes) continue;
    const auto bytes = static_cast<int64_t>(*t.peak_mem_bytes);
    row.peak_mem_bytes = std::max(row.peak_mem_bytes.value_or(bytes), bytes);
  }
  row.final_loss = MedianOf(v, &Trial::final_loss);
  row.accuracy = MedianOf(v, &Trial::accuracy);
  return row;
}

}  // namespace

std::vector<VariantRow> Summarize(store::Store& store, int64_t run_id, uint64_t seed, int resamples) {
  return Summarize(store.ReadRunTrials(run_id), seed, resamples);
}

std::vector<VariantRow> Summarize(const std::vector<store::RunTrial>& trials, uint64_t seed, int resamples) {
  const std::vector<Variant> variants = GroupVariants(trials);
  std::vector<VariantRow> rows;
  for (const Variant& v : variants) rows.push_back(Figures(v));
  const auto base = std::find_if(variants.begin(), variants.end(),
                                 [](const Variant& v) { return v.is_baseline; });
  if (base == variants.end()) return rows;
  const size_t b = static_cast<size_t>(base - variants.begin());
  const std::vector<Repeat> base_repeats = OkRepeats(*base);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == b) continue;
    if (rows[i].accuracy && rows[b].accuracy) {
      rows[i].accuracy_delta = *rows[i].accuracy - *rows[b].accuracy;
    }
    const std::vector<Repeat> repeats = OkRepeats(variants[i]);
    if (resamples < 1 || repeats.empty() || base_repeats.empty() || !(*rows[b].samples_per_s > 0)) continue;
    rows[i].speedup = BootstrapSpeedup(base_repeats, repeats, resamples, seed);
    if (rows[i].noise.unstable()) {
      rows[i].repeats_needed = RepeatsNeeded(std::min(rows[i].noise.repeats, rows[b].noise.repeats),
                                             RelativeHalfWidth(*rows[i].speedup), kDefaultThreshold);
    }
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
      s.speedup_ci_low = r.speedup->low;
      s.speedup_ci_high = r.speedup->high;
      s.significant = r.speedup->significant;
      s.resamples = r.speedup->resamples;
      s.seed = r.speedup->seed;
    }
    out.push_back(std::move(s));
  }
  return out;
}

void WriteVariantStats(store::Store& store, int64_t run_id,
                       const std::vector<VariantRow>& rows) {
  store.RecordVariantStats(run_id, ToVariantStats(rows));
}

}  // namespace runx::report
