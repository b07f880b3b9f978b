#pragma once
// What `runx submit` has to tell the person who runs it, as values: slurm/ prints nothing, the
// command (cli/submit.cc, cli/submit_status.cc) prints these and decides the exit status.
// No LibTorch.
#include <stdexcept>
#include <string>
#include <utility>

namespace runx::slurm {

/// One message, in the order it arose. The command prints an error as `runx: error: TEXT` (and
/// `hint: HINT`), a warning as `runx: warning: TEXT`, a note as `runx submit: TEXT`.
struct Message {
  enum class Kind { kError, kWarning, kNote };
  Kind kind = Kind::kNote;
  std::string text;
  std::string hint;  ///< what to do about an error; "" when nothing is said

  static Message Error(std::string text, std::string hint = "") {
    return {Kind::kError, std::move(text), std::move(hint)};
  }
  static Message Warning(std::string text) { return {Kind::kWarning, std::move(text), ""}; }
  static Message Note(std::string text) { return {Kind::kNote, std::move(text), ""}; }
};

/// A request refused before anything was written or submitted (invalid input, a folder that is
/// not a submission's): the command's exit status 2.
class SubmitError : public std::runtime_error {
 public:
  explicit SubmitError(const std::string& what, std::string hint = "")
      : std::runtime_error(what), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }  ///< "" when none

 private:
  std::string hint_;
};

}  // namespace runx::slurm
