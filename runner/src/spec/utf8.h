#pragma once
// Internal: UTF-8 checks. nlohmann::json refuses to dump a string that is not UTF-8 (type_error
// 316), so every string of a document is checked where it is read, and refused with a place.
#include <cstddef>
#include <string>
#include <string_view>

namespace runx::spec {

/// The offset of the first byte of `text` that does not start or continue a well-formed UTF-8
/// sequence (overlong forms, surrogates and code points above U+10FFFF included, as
/// nlohmann::json judges them), or std::string::npos when `text` is valid UTF-8.
size_t InvalidUtf8At(std::string_view text);

/// `text` with each byte InvalidUtf8At would stop at replaced by U+FFFD, so that it can be
/// stored in a document and dumped.
std::string ReplaceInvalidUtf8(std::string_view text);

/// `text` with each such byte written as `\xNN`: printable in any message.
std::string EscapeInvalidUtf8(std::string_view text);

/// The number of characters (code points) of valid UTF-8 `text`.
size_t Utf8Length(std::string_view text);

/// The message of a string that is not UTF-8, e.g. "invalid UTF-8 byte 0xff in string 'a\xff'";
/// `what` names the string ("string", "key", "value").
std::string InvalidUtf8Message(std::string_view text, const std::string& what);

}  // namespace runx::spec
