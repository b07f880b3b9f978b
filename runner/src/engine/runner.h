#pragma once
// Running an experiment file end to end: load + validate, open the store, run, record, report.
#include <optional>
#include <string>
#include <vector>

namespace runx::engine {

struct RunOptions {
  std::string file;
  std::vector<std::string> overrides;  ///< --set key=value, in order
  std::optional<std::string> db;       ///< --db PATH (else the experiment's `results`)
  bool quiet = false;
  std::string command_line;
};

/// Returns the process exit status: 0 ran (whatever the trial's status), 2 invalid input,
/// 1 could not run (store or plugin directory unusable).
int RunExperiment(const RunOptions& options);

/// `runx validate`: every problem of every file, exit 2 on any, 0 when all are valid.
int ValidateFiles(const std::vector<std::string>& files, const std::vector<std::string>& overrides);

/// `runx doctor` and `runx plugins`.
int Doctor();
int ListPlugins();

}  // namespace runx::engine
