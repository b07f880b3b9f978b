#pragma once
// argv -> command -> exit status. Nothing else lives in cli/.
#include <string>
#include <vector>

namespace runx::cli {

/// `runx query SQL`: read-only; exit 0 on success, 1 on a refused or failed statement.
int Query(const std::string& db, const std::string& sql, const std::string& format);

/// Entry point of the runx binary.
int Main(int argc, char** argv);

}  // namespace runx::cli
