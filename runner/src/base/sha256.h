#pragma once
// SHA-256 (OpenSSL's EVP): the identities of configs, files, builds and environments.

#include <string>
#include <string_view>

namespace runx::base {

/// sha256 of `data`, lower-case hex.
std::string Sha256Hex(std::string_view data);

/// sha256 of a file's content, lower-case hex; throws std::runtime_error when it cannot be read.
std::string Sha256OfFile(const std::string& path);

}  // namespace runx::base
