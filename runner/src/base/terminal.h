#pragma once

// Text from configs, stores and error messages made safe to print on a terminal.

#include <string>
#include <string_view>

namespace runx::base {

/// `text` with every control character escaped, so that a value from a config or a shared store
/// cannot move the cursor, retitle the window or clear the screen when printed (a terminal escape
/// injection): C0 controls and DEL as \n, \r, \t, \e or \xNN, C1 controls (U+0080-U+009F) as
/// \u0080... Printable text, UTF-8 included, is unchanged.
std::string Printable(std::string_view text);

/// The same with line breaks kept: for whole tables and reports printed line by line.
std::string PrintableLines(std::string_view text);

}  // namespace runx::base
