#pragma once
// A file and its sidecar (FILE and FILE.json) made by a program, whole or not at all: the program
// writes a partial pair beside the final one, a check may look at it, and only then are both moved
// into place, the file before its sidecar, so that a reader that waits for the sidecar never sees
// half a pair. A lock file (FILE.lock) makes two makers of one pair take turns; the second finds
// it made. runx compile's packages and TorchScript files are made so. Prints nothing.
#include <functional>
#include <string>
#include <vector>

namespace runx::base {

struct FilePairRequest {
  std::string path;  ///< the final file; its sidecar is path + ".json"
  /// The program and its arguments, the partial file's path appended last. argv[0] is looked up
  /// on PATH.
  std::vector<std::string> argv;
  /// true: the program's stderr is kept (FilePairResult::err); false: it writes to this process's
  /// stdout and stderr (a compile that prints its progress for minutes).
  bool capture = false;
};

struct FilePairResult {
  enum class Outcome {
    kMade,           ///< made and moved into place
    kMadeMeanwhile,  ///< another maker made it while this one waited for the lock
    kCannotRun,      ///< the program could not be started (`error`)
    kFailed,         ///< it ended with `status` != 0; nothing kept
    kNoOutput,       ///< it ended well but wrote no pair; nothing kept
    kRejected,       ///< the check refused the partial pair; nothing kept
    kCannotMove,     ///< the pair could not be moved into place (`error`); nothing kept
  };
  Outcome outcome = Outcome::kFailed;
  int status = -1;      ///< the program's exit status (or 128 + signal)
  std::string err;      ///< its stderr, when captured
  std::string error;    ///< why it could not start or be moved
  std::string partial;  ///< the partial file's path (gone afterwards)
  bool made() const { return outcome == Outcome::kMade || outcome == Outcome::kMadeMeanwhile; }
};

/// Makes the pair at `request.path` unless it is there (then kMadeMeanwhile, the program not run).
/// `starting(argv)` is called just before the program starts, with its whole command line;
/// `accept(partial)` (may be empty) decides on the partial pair before it is moved into place.
/// Creates the folder of `path`. Throws std::runtime_error when the lock cannot be taken.
FilePairResult MakeFilePair(const FilePairRequest& request,
                            const std::function<void(const std::vector<std::string>& argv)>& starting,
                            const std::function<bool(const std::string& partial)>& accept);

/// Whether the pair at `path` is whole: the file and its sidecar exist.
bool FilePairPresent(const std::string& path);

}  // namespace runx::base
