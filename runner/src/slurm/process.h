#pragma once
// Running SLURM's commands (sbatch, squeue, sacct): argv in, exit status and output back. No shell
// is involved, so nothing in an argument is interpreted. No LibTorch.
#include <string>
#include <vector>

namespace runx::slurm {

struct ProcessResult {
  bool started = false;  ///< false: the program could not be run (`error` says why, e.g. not found)
  int status = -1;       ///< exit status, or 128 + the signal that ended it
  std::string out;       ///< stdout
  std::string err;       ///< stderr
  std::string error;     ///< why it did not start
};

/// Runs `argv` (argv[0] looked up on PATH) with stdin from /dev/null and waits for it.
ProcessResult RunProcess(const std::vector<std::string>& argv);

/// The first line of `text` that is not blank, trimmed; "" when none.
std::string FirstLine(const std::string& text);

}  // namespace runx::slurm
