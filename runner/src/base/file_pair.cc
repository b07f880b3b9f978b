#include "base/file_pair.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "base/files.h"
#include "base/process.h"

namespace runx::base {

namespace fs = std::filesystem;

bool FilePairPresent(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec) && fs::exists(path + ".json", ec);
}

FilePairResult MakeFilePair(const FilePairRequest& request,
                            const std::function<void(const std::vector<std::string>& argv)>& starting,
                            const std::function<bool(const std::string& partial)>& accept) {
  FilePairResult r;
  std::error_code ec;
  const fs::path final_path(request.path);
  fs::create_directories(final_path.parent_path(), ec);
  FileLock lock(request.path + ".lock");
  if (FilePairPresent(request.path)) {
    r.outcome = FilePairResult::Outcome::kMadeMeanwhile;
    return r;
  }
  r.partial =
      (final_path.parent_path() / (".partial-" + std::to_string(getpid()) + "-" + final_path.filename().string()))
          .string();
  std::vector<std::string> argv = request.argv;
  argv.push_back(r.partial);
  if (starting) starting(argv);
  const auto discard = [&] {
    fs::remove(r.partial, ec);
    fs::remove(r.partial + ".json", ec);
  };
  if (request.capture) {
    const auto run = RunProcess(argv);
    if (!run.started) {
      r.outcome = FilePairResult::Outcome::kCannotRun;
      r.error = run.error;
      return r;
    }
    r.status = run.status;
    r.err = run.err;
  } else {
    try {
      r.status = WaitForExit(Spawn(argv));
    } catch (const SpawnError& e) {
      r.outcome = FilePairResult::Outcome::kCannotRun;
      r.error = std::strerror(e.error());
      return r;
    }
  }
  if (r.status != 0) {
    discard();
    r.outcome = FilePairResult::Outcome::kFailed;
    return r;
  }
  if (!FilePairPresent(r.partial)) {
    discard();
    r.outcome = FilePairResult::Outcome::kNoOutput;
    return r;
  }
  if (accept && !accept(r.partial)) {
    discard();
    r.outcome = FilePairResult::Outcome::kRejected;
    return r;
  }
  fs::rename(r.partial, request.path, ec);
  if (!ec) fs::rename(r.partial + ".json", request.path + ".json", ec);
  if (ec) {
    discard();
    r.outcome = FilePairResult::Outcome::kCannotMove;
    r.error = ec.message();
    return r;
  }
  r.outcome = FilePairResult::Outcome::kMade;
  return r;
}

}  // namespace runx::base
