#pragma once
// The time now, as the store and the submission folders write it.

#include <string>

namespace runx::base {

/// UTC now as ISO-8601 ("2026-12-02T13:08:01Z"), as the store's times are held.
std::string UtcNow();

/// UTC now in `strftime_format` ("%Y%m%dT%H%M%SZ": "20261202T130801Z"); at most 31 characters.
std::string UtcNow(const char* strftime_format);

}  // namespace runx::base
