#include "report/html_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "store/run_series.h"

namespace runx::report {
namespace {

// The ok trials of each variant (rows[i].label), in repeat order (then id), as Summarize takes them.
std::vector<std::vector<const store::RunTrial*>> OkTrials(const std::vector<VariantRow>& rows,
                                                          const std::vector<store::RunTrial>& trials) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < rows.size(); ++i) index.emplace(rows[i].label, i);
  std::vector<std::vector<const store::RunTrial*>> out(rows.size());
  for (const store::RunTrial& t : trials) {
    if (t.status == TrialStatus::kOk) out[index.at(t.label)].push_back(&t);
  }
  for (auto& v : out) {
    std::stable_sort(v.begin(), v.end(), [](const store::RunTrial* a, const store::RunTrial* b) {
      return std::tie(a->repeat_index, a->trial_id) < std::tie(b->repeat_index, b->trial_id);
    });
  }
  return out;
}

void AddSteps(RunReport& r, const VariantRow& row, const std::vector<const store::RunTrial*>& ok, int max_points) {
  std::vector<StepPoint> all;
  for (const store::RunTrial* t : ok) {
    for (const auto& [wall_ms, samples] : t->measured_steps) all.push_back({row.label, t->repeat_index, wall_ms});
  }
  if (all.empty() || !row.step_ms_median) return;
  std::vector<double> ms;
  for (const StepPoint& p : all) ms.push_back(p.ms);
  StepBox box;
  box.label = row.label;
  box.p10 = *row.step_ms_p10;
  box.q1 = Percentile(ms, 0.25);
  box.median = *row.step_ms_median;
  box.q3 = Percentile(ms, 0.75);
  box.p90 = *row.step_ms_p90;
  box.steps = static_cast<int>(all.size());
  const size_t cap = static_cast<size_t>(std::max(1, max_points));
  box.stride = static_cast<int>((all.size() + cap - 1) / cap);
  for (size_t i = 0; i < all.size(); i += static_cast<size_t>(box.stride)) r.step_points.push_back(all[i]);
  box.shown = static_cast<int>((all.size() + static_cast<size_t>(box.stride) - 1) / static_cast<size_t>(box.stride));
  r.step_boxes.push_back(box);
}

// Median loss per step over the variant's ok repeats.
std::map<int64_t, std::pair<double, int>> MedianLoss(const std::vector<const store::RunTrial*>& ok,
                                                     const std::map<int64_t, std::vector<store::LossPoint>>& curves) {
  std::map<int64_t, std::vector<double>> by_step;
  for (const store::RunTrial* t : ok) {
    const auto it = curves.find(t->trial_id);
    if (it == curves.end()) continue;
    for (const store::LossPoint& p : it->second) {
      if (std::isfinite(p.loss)) by_step[p.position].push_back(p.loss);
    }
  }
  std::map<int64_t, std::pair<double, int>> out;
  for (auto& [step, losses] : by_step) {
    const int n = static_cast<int>(losses.size());
    out[step] = {Median(std::move(losses)), n};
  }
  return out;
}

void AddLoss(store::Store& store, RunReport& r, const std::vector<std::vector<const store::RunTrial*>>& ok) {
  const auto curves = store::ReadLossCurves(store, r.run.id);
  std::vector<std::map<int64_t, std::pair<double, int>>> medians;
  for (size_t i = 0; i < r.variants.size(); ++i) {
    medians.push_back(MedianLoss(ok[i], curves));
    for (const auto& [step, m] : medians.back()) r.loss.push_back({r.variants[i].label, step, m.first, m.second});
  }
  const auto base =
      std::find_if(r.variants.begin(), r.variants.end(), [](const VariantRow& v) { return v.is_baseline; });
  if (base == r.variants.end()) return;
  const auto& b = medians[static_cast<size_t>(base - r.variants.begin())];
  for (size_t i = 0; i < r.variants.size(); ++i) {
    if (r.variants[i].is_baseline) continue;
    for (const auto& [step, m] : medians[i]) {
      const auto it = b.find(step);
      if (it != b.end()) r.drift.push_back({r.variants[i].label, step, m.first - it->second.first});
    }
  }
}

void AddMemory(store::Store& store, RunReport& r, const std::vector<std::vector<const store::RunTrial*>>& ok) {
  const auto reserved = store::ReadSummaryMetrics(store, r.run.id, {"reserved_mem_bytes"});
  for (size_t i = 0; i < r.variants.size(); ++i) {
    const VariantRow& row = r.variants[i];
    if (row.peak_mem_bytes) r.memory.push_back({row.label, "peak_mem_bytes", static_cast<double>(*row.peak_mem_bytes)});
    std::optional<double> most;
    for (const store::RunTrial* t : ok[i]) {
      const auto it = reserved.find(t->trial_id);
      if (it == reserved.end()) continue;
      const double bytes = it->second.at("reserved_mem_bytes");
      most = std::max(most.value_or(bytes), bytes);
    }
    if (most) r.memory.push_back({row.label, "reserved_mem_bytes", *most});
  }
}

void AddFrontier(store::Store& store, RunReport& r, const std::vector<store::RunTrial>& trials) {
  std::map<int64_t, const store::RunTrial*> by_id;
  for (const store::RunTrial& t : trials) by_id[t.trial_id] = &t;
  // trial -> probe -> name -> value
  std::map<int64_t, std::map<int64_t, std::map<std::string, double>>> probes;
  for (const store::StepMetric& m : store::ReadStepMetrics(store, r.run.id, "auto_batch.")) {
    probes[m.trial_id][m.step][m.name] = m.value;
  }
  const auto chosen = store::ReadSummaryMetrics(store, r.run.id, {"auto_batch.chosen"});
  for (const store::RunTrial& t : trials) {  // in the run's order
    const auto it = probes.find(t.trial_id);
    if (it == probes.end()) continue;
    for (const auto& [probe, values] : it->second) {
      const auto batch = values.find("auto_batch.batch");
      if (batch == values.end()) continue;
      FrontierProbe p;
      p.label = t.label;
      p.trial_id = t.trial_id;
      p.repeat = t.repeat_index;
      p.probe = probe;
      p.batch = batch->second;
      p.fits = values.count("auto_batch.fits") && values.at("auto_batch.fits") != 0;
      const auto get = [&](const char* name) -> std::optional<double> {
        const auto v = values.find(name);
        return p.fits && v != values.end() ? std::optional<double>(v->second) : std::nullopt;
      };
      p.step_ms = get("auto_batch.step_ms");
      p.samples_per_s = get("auto_batch.samples_per_s");
      p.peak_bytes = get("auto_batch.peak_bytes");
      r.probes.push_back(p);
    }
    const auto c = chosen.find(t.trial_id);
    if (c != chosen.end()) r.chosen.push_back({t.label, t.trial_id, t.repeat_index, c->second.at("auto_batch.chosen")});
  }
}

// The intervals of every run and variant of `runs` with two processes or more.
std::vector<HistoryInterval> HistoryIntervals(store::Store& store, const std::vector<HistoryRun>& runs) {
  std::vector<HistoryInterval> out;
  for (const HistoryRun& h : runs) {
    const std::vector<store::RunTrial> trials = store.ReadRunTrials(h.run.id);
    for (const HistoryVariant& v : h.variants) {
      std::vector<const store::RunTrial*> mine;
      for (const store::RunTrial& t : trials) {
        if (t.label == v.figures.label) mine.push_back(&t);
      }
      std::vector<double> rates;
      for (const Repeat& r : RepeatsOf(Processes(mine))) rates.push_back(Throughput({r}));
      if (auto i = ProcessInterval(rates)) out.push_back({h.run.id, v.figures.label, *i});
    }
  }
  return out;
}

}  // namespace

std::optional<RateInterval> ProcessInterval(const std::vector<double>& rates) {
  // kMinSpreadDf, as every interval runx draws: two processes would give t(0.975, 1) = 12.7.
  if (rates.size() < static_cast<size_t>(kMinSpreadDf) + 1) return std::nullopt;
  std::vector<double> logs;
  double mean = 0;
  for (const double r : rates) {
    if (!(r > 0)) return std::nullopt;
    logs.push_back(std::log(r));
    mean += logs.back();
  }
  mean /= static_cast<double>(logs.size());
  const Spread spread = PoolLogSpread({logs});
  const double half = StudentTQuantile(0.975, spread.df) * spread.sd / std::sqrt(static_cast<double>(logs.size()));
  return RateInterval{std::exp(mean - half), std::exp(mean + half), static_cast<int>(logs.size())};
}

RunComparison BuildRunComparison(store::Store& store, int64_t a, int64_t b, double threshold) {
  RunComparison out;
  out.a = store::ReadRunOverview(store, a);
  out.b = store::ReadRunOverview(store, b);
  const CompareSide side_a{a, store.ReadRunTrials(a), std::nullopt};
  const CompareSide side_b{b, store.ReadRunTrials(b), std::nullopt};
  std::vector<store::RunTrial> both = side_a.trials;
  both.insert(both.end(), side_b.trials.begin(), side_b.trials.end());
  CompareOptions options;
  options.threshold = threshold;
  out.comparison = Compare(side_a, side_b, options, SpreadBook::Read(store, both));
  out.environment = EnvironmentDifferences(out.a, out.b);
  // `runx compare`'s own lines (hints, remarks), so that the page and the command cannot say
  // different things.
  out.remarks = CompareRemarks(out.comparison, out.a, out.b, Gate::kOff);
  return out;
}

RunReport BuildRunReport(store::Store& store, int64_t run_id, const HtmlOptions& options) {
  RunReport r;
  r.run = store::ReadRunOverview(store, run_id);
  const std::vector<store::RunTrial> trials = store.ReadRunTrials(run_id);
  r.variants = Summarize(trials, SpreadBook::Read(store, trials));
  const auto ok = OkTrials(r.variants, trials);
  for (size_t i = 0; i < r.variants.size(); ++i) AddSteps(r, r.variants[i], ok[i], options.max_points);
  AddLoss(store, r, ok);
  AddMemory(store, r, ok);
  AddFrontier(store, r, trials);
  return r;
}

HtmlReport BuildHtmlReport(store::Store& store, const std::vector<int64_t>& run_ids, const HtmlOptions& options) {
  HtmlReport report;
  report.options = options;
  std::set<int64_t> seen;
  for (const int64_t id : run_ids) {
    if (seen.insert(id).second) report.runs.push_back(BuildRunReport(store, id, options));
  }
  CompareOptions compare;
  compare.threshold = options.threshold;
  std::set<std::string> experiments;
  for (const RunReport& r : report.runs) {
    if (!experiments.insert(r.run.experiment).second) continue;
    const int limit = std::max(0, options.history_runs);
    // Every run: a variant is compared with the latest earlier run that measured it, however far back.
    const std::vector<int64_t> ids = store::ListRuns(store, r.run.experiment, 0);
    const size_t shown = limit > 0 ? static_cast<size_t>(limit) : ids.size();
    ExperimentHistory h{r.run.experiment, options.threshold, BuildHistory(store, ids, shown, compare), {}};
    h.intervals = HistoryIntervals(store, h.runs);
    report.histories.push_back(std::move(h));
  }
  if (run_ids.size() == 2 && report.runs.size() == 2) {
    report.comparison = BuildRunComparison(store, run_ids[0], run_ids[1], options.threshold);
  }
  return report;
}

}  // namespace runx::report
