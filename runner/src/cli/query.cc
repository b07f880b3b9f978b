#include "cli/commands.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "store/format.h"
#include "store/store.h"

namespace runx::cli {

int Query(const std::string& db, const std::string& sql, const std::string& format) {
  const auto f = format == "csv"        ? store::Format::kCsv
                 : format == "json"     ? store::Format::kJson
                 : format == "markdown" ? store::Format::kMarkdown
                                        : store::Format::kTable;
  try {
    // Rows are printed as the query steps them: memory stays bounded however large the result.
    const std::unique_ptr<store::RowSink> writer = store::MakeResultWriter(f, std::cout);
    store::QueryReadOnly(db, sql, *writer);
    std::cout.flush();
    return 0;
  } catch (const store::StoreError& e) {
    std::cout.flush();  // the rows printed before the error come first
    fmt::print(stderr, "runx: error: {}\n", e.what());
    // No store is invalid input, as for compare, history and report.
    return dynamic_cast<const store::MissingStoreError*>(&e) != nullptr ? 2 : 1;
  }
}

}  // namespace runx::cli
