#pragma once
// The user's code in the history: the commit of the git repository that holds an experiment
// file, so that `runx compare` and `runx history` can name runs by the user's revisions.
#include <optional>
#include <string>

namespace runx::cli {

struct UserCommit {
  std::string sha;            ///< the full commit id of HEAD; "" outside a repository (or without git)
  std::optional<bool> dirty;  ///< tracked files differ from HEAD (untracked files do not count)
};

/// The commit of the repository holding `file` (git -C <its folder>); empty where git is missing,
/// the folder is in no repository or git refuses it.
UserCommit CommitOf(const std::string& file);

}  // namespace runx::cli
