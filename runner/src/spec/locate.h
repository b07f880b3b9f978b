#pragma once
// Internal: issues (found by JSON pointer) turned into diagnostics at a place in the file, or at
// the --set override that gave the value.
#include <string>
#include <vector>

#include "spec/issue.h"
#include "spec/source_map.h"
#include "spec/spec.h"

namespace runx::spec {

/// A file's path and lines, to place diagnostics in it.
class Source {
 public:
  Source(std::string path, const std::string& text);

  Diagnostic At(Location where, std::string message, std::vector<std::string> notes = {}) const;

  /// Adds the source lines, once the diagnostics that will be shown are known (a line may be
  /// long and shared by thousands of problems).
  void AddSourceLines(std::vector<Diagnostic>* diagnostics) const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> lines_;
};

/// `issue` at the origin of its pointer in `origins` (or of the nearest ancestor that has one):
/// a place in `source`, or the override that set the value ("--set key=value", no place).
Diagnostic FromIssue(const Source& source, const SourceMap& origins, const std::vector<Override>& overrides,
                     Issue issue);

}  // namespace runx::spec
