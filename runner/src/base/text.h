#pragma once
// Lines picked out of a command's or a library's output: the message worth showing.

#include <string>
#include <string_view>

namespace runx::base {

/// The first line of `text` that is not blank, without its leading and trailing blanks (a CR
/// included); "" when none. What a tool or a library says first, without the blank lines and
/// backtraces that may follow it.
std::string FirstLine(std::string_view text);

/// The last line of `text` that is not blank, without its trailing blanks (a CR included); when
/// `skip_containing` is not empty, lines that contain it are passed over (LibTorch's "frame #"
/// backtrace lines). "" when none.
std::string LastLine(std::string_view text, std::string_view skip_containing = {});

}  // namespace runx::base
