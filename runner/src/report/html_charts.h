#pragma once
// The charts of `runx report` as Vega 5 specifications, each with its data inline: the page
// (html.h) hands every spec to Vega's View unchanged. Mark names are stable (the page's test mode
// counts the items of each named mark; docs/report.md lists them). No LibTorch.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/html_data.h"

namespace runx::report {

struct Chart {
  std::string id;  ///< unique in the page, e.g. "run-3-speedup"
  std::string title;
  std::string caption;          ///< what is drawn, for people, one paragraph
  nlohmann::ordered_json spec;  ///< Vega 5
};

/// Speedup bars (marks `bars`, `values`) with 95% interval whiskers (`whiskers`) and a rule at 1
/// (`one`): one bar per variant with a speedup (the baseline's is 1), one whisker per interval
/// (an inconclusive speedup without an interval has none). Only `faster` and `slower` get a
/// verdict's colour; `no change` and `inconclusive` are neutral greys. nullopt when no variant
/// but the baseline has a speedup (a run of one variant has nothing to compare).
std::optional<Chart> SpeedupChart(const RunReport& run);

/// Step-time distributions: per variant a box from the 25th to the 75th percentile (`boxes`),
/// its median (`medians`), the p10-p90 range (`ranges`), and the measured steps as points
/// (`points`, coloured by repeat). nullopt without measured steps.
std::optional<Chart> StepTimeChart(const RunReport& run);

/// Loss per training step, one line per variant (groups `series`, lines `lines`, one item per
/// step), each variant with its own dash and marker shape (`markers`) besides its colour, so that
/// curves that coincide (a technique that leaves the math alone) stay apart; the legend shows all
/// three. nullopt without losses (e.g. `task: infer`).
std::optional<Chart> LossChart(const RunReport& run);

/// Loss minus the baseline's, per step, one line per other variant (`series`, `lines`, `markers`,
/// dashed and shaped as in LossChart) and a rule at 0 (`zero`). nullopt without drift.
std::optional<Chart> LossDriftChart(const RunReport& run);

/// Peak and reserved memory, grouped bars per variant (groups `variants`, bars `bars`, labels
/// `values`). nullopt without memory figures.
std::optional<Chart> MemoryChart(const RunReport& run);

/// auto_batch's frontier: throughput (or peak memory, `memory`) of each probe by batch size
/// (`probes`: the probes that fit; `failed`: those that did not, along the axis; `chosen`: a rule
/// at each trial's chosen batch). nullopt when no trial probed.
std::optional<Chart> FrontierChart(const RunReport& run, bool memory);

/// A run's charts, those that have data, in the order above.
std::vector<Chart> RunCharts(const RunReport& run);

/// `name` as a part of an HTML id (of a chart or a section): every character but ASCII letters,
/// digits, '-' and '_' replaced by '-'.
std::string HtmlId(std::string name);

/// The history: samples/s per variant and run, oldest left (`series`, `lines`, `points`), on an
/// axis from 0 whose runs are named by date, the user's commit and tag; a whisker over the 95%
/// interval of each point measured by two processes or more (`whiskers`, history.intervals);
/// regressions (`regressions`: slower than the run before, by compare's rule) and improvements
/// (`improvements`) marked, inconclusive and unchanged points not; and a rule at each run of the
/// report (`reported`). nullopt when no run has figures.
std::optional<Chart> HistoryChart(const ExperimentHistory& history, const std::set<int64_t>& reported);

}  // namespace runx::report
