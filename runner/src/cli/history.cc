// `runx history [EXPERIMENT | FILE]`: the runs of an experiment, newest first, each variant's
// figures and whether it got faster or slower than in the run before.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/spelling.h"
#include "base/terminal.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "plugins/dirs.h"
#include "report/history.h"
#include "store/history.h"
#include "store/store.h"

namespace runx::cli {

std::string NoRunOf(store::Store& store, const std::string& experiment) {
  const std::vector<std::string> names = store::ListExperiments(store);
  const std::string guess = base::SuggestName(experiment, names);
  return fmt::format("no run of experiment '{}' in '{}'{}", experiment, store.path(),
                     guess.empty() ? names.empty() ? "" : fmt::format(" (its experiments: {})", fmt::join(names, ", "))
                                   : fmt::format("; did you mean '{}'?", guess));
}

int History(const HistoryArgs& args) {
  const auto table = ParseTableOptions(args.threshold, args.format);
  if (!table) return 2;
  std::string experiment = args.experiment;
  std::string db = args.db.value_or("results/runx.db");
  // An experiment file names its experiment (and, without --db, its results store).
  if (!experiment.empty() && std::filesystem::is_regular_file(experiment)) {
    const auto loaded = LoadPlan(experiment, {}, std::nullopt, spec::SchemaSet::Load(plugins::PluginDirs()));
    if (!loaded) return 2;
    if (!args.db) db = loaded->experiment.config.value("results", db);
    experiment = loaded->experiment.config.value("name", "");
  }
  if (!std::filesystem::exists(db)) {
    fmt::print(stderr, "runx: error: no results store at '{}' (--db names another)\n", db);
    return 2;
  }
  try {
    auto store = store::Store::OpenForReading(db);
    if (experiment.empty()) {
      const auto latest = store::LatestExperiment(store);
      if (!latest) {
        fmt::print(stderr, "runx: error: results store '{}' has no run yet\n", db);
        return 2;
      }
      experiment = *latest;
    }
    const int limit = args.limit > 0 ? args.limit : 0;
    // Every run: a variant is compared with the latest earlier run that measured it, however far back.
    const std::vector<int64_t> ids = store::ListRuns(store, experiment, 0);
    if (ids.empty()) {
      fmt::print(stderr, "runx: error: {}\n", NoRunOf(store, experiment));
      return 2;
    }
    report::CompareOptions options;
    options.threshold = table->threshold;
    const auto runs = report::BuildHistory(store, ids, limit > 0 ? static_cast<size_t>(limit) : ids.size(), options);
    const std::string text = report::RenderHistory(runs, experiment, table->format, table->threshold);
    std::cout << (ForTerminal(table->format) ? base::PrintableLines(text) : text);  // CSV and JSON stay exact
    std::cout.flush();
    return 0;
  } catch (const store::StoreError& e) {
    fmt::print(stderr, "runx: error: {}\n", e.what());
    return 1;
  }
}

}  // namespace runx::cli
