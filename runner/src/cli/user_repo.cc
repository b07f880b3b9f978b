#include "cli/user_repo.h"

#include <filesystem>

#include "base/process.h"
#include "base/text.h"

namespace runx::cli {

UserCommit CommitOf(const std::string& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(file, ec).parent_path();
  if (ec || !fs::is_directory(dir, ec)) return {};
  const auto head = base::RunProcess({"git", "-C", dir.string(), "rev-parse", "--verify", "-q", "HEAD"});
  const std::string sha = base::FirstLine(head.out);
  if (!head.started || head.status != 0 || sha.size() < 40) return {};
  UserCommit c;
  c.sha = sha;
  const auto status = base::RunProcess({"git", "-C", dir.string(), "status", "--porcelain", "--untracked-files=no"});
  if (status.started && status.status == 0) c.dirty = !base::FirstLine(status.out).empty();
  return c;
}

}  // namespace runx::cli
