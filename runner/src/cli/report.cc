// `runx report [RUN...] -o FILE`: one self-contained HTML file with the charts of runs (speedups,
// step times, loss, memory, auto_batch frontier), their experiment's history and environment, and
// for exactly two runs A B first what `runx compare A B` says.
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/files.h"
#include "cli/commands.h"
#include "report/html.h"
#include "report/html_data.h"
#include "report/vega_library.h"
#include "store/history.h"
#include "store/store.h"
#include "version.h"

namespace runx::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "runx: error: ";

}  // namespace

int Report(const ReportArgs& args) {
  const auto threshold = ParseThreshold(args.threshold);
  if (!threshold) {
    fmt::print(stderr,
               "{}--threshold '{}' is not a threshold: expected a percentage such as 2% (or a fraction such as "
               "0.02), from 0 up to 100%\n",
               kPrefix, args.threshold);
    return 2;
  }
  if (args.history < 0) {
    fmt::print(stderr, "{}--history {} is negative: give the number of runs to show, or 0 for all\n", kPrefix,
               args.history);
    return 2;
  }
  const fs::path out = args.out;
  if (out.empty() || fs::is_directory(out)) {
    fmt::print(stderr, "{}-o '{}' is not a file name: give the HTML file to write, e.g. -o report.html\n", kPrefix,
               args.out);
    return 2;
  }
  if (!fs::exists(args.db)) {
    fmt::print(stderr, "{}no results store at '{}' (--db names another; `runx FILE` makes one)\n", kPrefix, args.db);
    return 2;
  }
  try {
    auto store = store::Store::OpenForReading(args.db);
    std::vector<int64_t> ids;
    try {
      ids = ResolveRuns(store, args.runs.empty() ? std::vector<std::string>{"latest"} : args.runs, args.experiment);
    } catch (const store::StoreError& e) {
      fmt::print(stderr, "{}{} (runx history lists the runs)\n", kPrefix, e.what());
      return 2;
    }
    // The chart library before the figures: without it nothing is worth computing.
    std::string vega;
    try {
      vega = report::LoadVegaScript(report::JavaScriptDirs());
    } catch (const report::ChartLibraryError& e) {
      fmt::print(stderr, "{}{}\n", kPrefix, e.what());
      return 1;
    }
    report::HtmlOptions options;
    options.threshold = *threshold;
    options.history_runs = args.history;
    const report::HtmlReport data = report::BuildHtmlReport(store, ids, options);
    const report::PageInfo info{
        fmt::format("runx {} (git {}{})", Version(), GitSha(), GitDirty() == 1 ? ", uncommitted changes" : ""),
        args.db};
    const std::string page = report::RenderHtmlReport(data, info, vega);
    if (const std::string error = base::WriteFileAtomically(out.string(), page); !error.empty()) {
      fmt::print(stderr, "{}{}\n", kPrefix, error);
      return 1;
    }
    std::string runs;
    for (const auto& r : data.runs) runs += (runs.empty() ? "" : ", ") + std::to_string(r.run.id);
    std::error_code ec;
    const fs::path absolute = fs::absolute(out, ec);
    fmt::print("runx report: wrote {} (run{} {}, {} charts, {:.1f} MB); open file://{} in a browser\n", out.string(),
               data.runs.size() == 1 ? "" : "s", runs, report::PageCharts(data).size(),
               static_cast<double>(page.size()) / 1e6, (ec ? out : absolute).string());
    return 0;
  } catch (const store::StoreError& e) {
    fmt::print(stderr, "{}{}\n", kPrefix, e.what());
    return 1;
  }
}

}  // namespace runx::cli
