// `runx compare A B`: two runs (or two variants) side by side with a verdict per variant, and a
// regression gate for CI (--fail-on-regression).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "base/terminal.h"
#include "cli/commands.h"
#include "report/compare.h"
#include "store/history.h"
#include "store/store.h"

namespace runx::cli {
namespace {

// A side as written: a run reference and, after the first ':', a variant label.
struct SideRef {
  std::string run;
  std::optional<std::string> label;
};

SideRef ParseSide(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return {text, std::nullopt};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

bool IsRelative(const std::string& ref) { return ref == "latest" || ref == "previous"; }

}  // namespace

std::vector<int64_t> ResolveRuns(store::Store& store, const std::vector<std::string>& refs,
                                 const std::string& experiment) {
  // Run ids, `latest` and `previous` first; a git revision then looks among the runs of the
  // experiment the first of those names, unless `experiment` says which.
  if (!experiment.empty()) {
    const auto names = store::ListExperiments(store);
    if (std::find(names.begin(), names.end(), experiment) == names.end())
      throw store::StoreError(NoRunOf(store, experiment));
  }
  std::vector<int64_t> ids(refs.size(), 0);
  const auto direct = [](const std::string& r) {
    return IsRelative(r) || r.find_first_not_of("0123456789") == std::string::npos;
  };
  for (size_t i = 0; i < refs.size(); ++i) {
    if (direct(refs[i])) ids[i] = store::ResolveRun(store, refs[i], experiment);
  }
  std::string among = experiment;
  const auto first = std::find_if(ids.begin(), ids.end(), [](int64_t id) { return id != 0; });
  if (among.empty() && first != ids.end()) among = store::ReadRunOverview(store, *first).experiment;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (!ids[i]) ids[i] = store::ResolveRun(store, refs[i], among);
  }
  return ids;
}

std::optional<double> ParseThreshold(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const bool percent = text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  if (number.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(number.c_str(), &end);
  if (errno != 0 || end != number.c_str() + number.size() || !std::isfinite(v)) return std::nullopt;
  const double fraction = percent ? v / 100 : v;
  // A bare number of 1 or more would be a threshold of 100% or more: surely meant as a percentage.
  if (!percent && v >= 1) return std::nullopt;
  if (!(fraction >= 0) || fraction >= 1) return std::nullopt;
  return fraction;
}

std::optional<TableOptions> ParseTableOptions(const std::string& threshold, const std::string& format) {
  const auto fraction = ParseThreshold(threshold);
  if (!fraction) {
    fmt::print(stderr,
               "runx: error: --threshold '{}' is not a threshold: expected a percentage such as 2% (or a "
               "fraction such as 0.02), from 0 up to 100%\n",
               threshold);
    return std::nullopt;
  }
  const auto parsed = report::ParseOutputFormat(format);
  if (!parsed) {
    fmt::print(stderr, "runx: error: --format '{}' is not one of table, csv, json, markdown\n", format);
    return std::nullopt;
  }
  return TableOptions{*fraction, *parsed};
}

int Compare(const CompareArgs& args) {
  const auto table = ParseTableOptions(args.threshold, args.format);
  if (!table) return 2;
  const SideRef a = ParseSide(args.a);
  const SideRef b = ParseSide(args.b);
  if (a.label.has_value() != b.label.has_value()) {
    fmt::print(
        stderr,
        "runx: error: give a variant on both sides (RUN:LABEL RUN:LABEL, e.g. latest:baseline latest:bf16) or on "
        "neither (two whole runs); got '{}' and '{}'\n",
        args.a, args.b);
    return 2;
  }
  if (!std::filesystem::exists(args.db)) {
    fmt::print(stderr, "runx: error: no results store at '{}' (--db names another)\n", args.db);
    return 2;
  }
  try {
    auto store = store::Store::OpenForReading(args.db);
    int64_t id_a = 0, id_b = 0;
    try {
      const std::vector<int64_t> ids = ResolveRuns(store, {a.run, b.run}, args.experiment);
      id_a = ids[0];
      id_b = ids[1];
    } catch (const store::StoreError& e) {
      fmt::print(stderr, "runx: error: {}\n", e.what());
      return 2;
    }
    const store::RunOverview run_a = store::ReadRunOverview(store, id_a);
    const store::RunOverview run_b = store::ReadRunOverview(store, id_b);
    report::CompareSide side_a{id_a, store.ReadRunTrials(id_a), a.label};
    report::CompareSide side_b{id_b, store.ReadRunTrials(id_b), b.label};
    std::vector<store::RunTrial> both = side_a.trials;
    both.insert(both.end(), side_b.trials.begin(), side_b.trials.end());
    report::CompareOptions options;
    options.threshold = table->threshold;
    report::Comparison comparison;
    try {
      comparison = report::Compare(side_a, side_b, options, report::SpreadBook::Read(store, both));
    } catch (const store::StoreError& e) {  // a label that names no variant
      fmt::print(stderr, "runx: error: {}\n", e.what());
      return 2;
    }
    const report::Gate gate = args.fail_on_inconclusive ? report::Gate::kRegressionsOrInconclusive
                              : args.fail_on_regression ? report::Gate::kRegressions
                                                        : report::Gate::kOff;
    // Labels and notes are the users' text: escaped for a terminal (CSV and JSON stay exact;
    // JSON escapes its own).
    const std::string text = report::RenderComparison(comparison, run_a, run_b, table->format, gate);
    std::cout << (ForTerminal(table->format) ? base::PrintableLines(text) : text);
    std::cout.flush();
    return comparison.GateFailures(gate).empty() ? 0 : 1;
  } catch (const store::StoreError& e) {
    fmt::print(stderr, "runx: error: {}\n", e.what());
    return 1;
  }
}

}  // namespace runx::cli
