#pragma once
// Running an experiment file end to end: load + validate, expand the sweep, run each trial in its
// own process, record, report.
#include <optional>
#include <string>
#include <vector>

namespace runx::engine {

struct RunOptions {
  std::string file;
  std::vector<std::string> overrides;  ///< --set key=value, in order
  std::optional<std::string> db;       ///< --db PATH (else the experiment's `results`)
  std::optional<std::string> shard;    ///< --shard i/n
  bool quiet = false;
  bool json = false;    ///< machine-readable events on stdout
  bool force = false;   ///< re-run trials that already have an ok result
  bool strict = false;  ///< exit 1 when any trial is not ok
  bool in_process = false;  ///< run trials in this process (debugging; no crash isolation)
  std::string command_line;
};

/// Returns the process exit status: 0 ran (whatever the trials' statuses, unless --strict),
/// 1 a trial was not ok under --strict or the store is unusable, 2 invalid input, 130 interrupted.
int RunExperiment(const RunOptions& options);

/// `runx plan`: the trial matrix, nothing runs.
int PlanExperiment(const std::string& file, const std::vector<std::string>& overrides,
                   const std::optional<std::string>& shard);

/// `runx validate`: every problem of every file, exit 2 on any, 0 when all are valid.
int ValidateFiles(const std::vector<std::string>& files, const std::vector<std::string>& overrides);

/// `runx doctor` and `runx plugins`.
int Doctor();
int ListPlugins();

}  // namespace runx::engine
