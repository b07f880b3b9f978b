#include <fmt/format.h>

#include "base/cleanup.h"
#include "cli/commands.h"
#include "store/merge.h"
#include "store/store.h"

namespace runx::cli {
namespace {

std::string Plural(int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "2 runs added, 1 already present (1 moved on since); 12 trials added, 0 already present"
std::string Describe(const store::MergeCounts& c) {
  std::string text = fmt::format("{} added, {} already present", Plural(c.runs_added, "run", "runs"), c.runs_present);
  if (c.runs_updated > 0) text += fmt::format(" ({} moved on since)", c.runs_updated);
  text += fmt::format("; {} added, {} already present", Plural(c.trials_added, "trial", "trials"), c.trials_present);
  // Each added trial brings its own run's membership; the others are reuses by other runs.
  const int64_t reused = c.memberships_added - c.trials_added;
  if (reused > 0)
    text += fmt::format("; {} added", Plural(reused, "reuse of a trial by a run", "reuses of trials by runs"));
  return text;
}

}  // namespace

int Merge(const std::string& out, const std::vector<std::string>& inputs, const store::MergeOptions& options) {
  try {
    // Ctrl-C, SIGTERM (kill, scancel) and SIGHUP remove the inputs' snapshots and a new output.
    const base::RemoveOnSignalHandlers cleanup;
    const store::MergeResult r = store::MergeStores(out, inputs, options);
    for (const store::MergedInput& in : r.inputs) {
      const std::string migrated = in.schema_version < store::LatestSchemaVersion()
                                       ? fmt::format(" (schema {}, read through a migrated copy)", in.schema_version)
                                       : "";
      const std::string ended =
          in.runs_ended > 0 ? fmt::format(" ({} still running there, merged as interrupted: its runner has ended)",
                                          Plural(in.runs_ended, "run", "runs"))
                            : "";
      fmt::print("{}{}: {}{}\n", in.path, migrated, Describe(in.counts), ended);
    }
    fmt::print("merged {} into {}{}: {}\n", Plural(static_cast<int64_t>(inputs.size()), "store", "stores"), out,
               r.created ? " (new)" : "", Describe(r.total));
    return 0;
  } catch (const store::StoreError& e) {
    fmt::print(stderr, "runx: error: {}\n", e.what());
    // An input that does not exist is invalid input (exit 2), as for every command.
    return dynamic_cast<const store::MissingStoreError*>(&e) != nullptr ? 2 : 1;
  }
}

}  // namespace runx::cli
