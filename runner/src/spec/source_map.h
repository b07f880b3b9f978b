#pragma once
// Where each value of an experiment came from: a place in the YAML file, or a --set override.
#include <map>
#include <string>
#include <vector>

namespace runx::spec {

/// A place in a file; 1-based, 0 when unknown.
struct Location {
  int line = 0;
  int column = 0;
};

/// The origin of one value of the document.
struct Origin {
  Location value;           ///< where the value starts
  Location key;             ///< where its key starts (mapping members only)
  int override_index = -1;  ///< >= 0: set by that --set override, not by the file
};

/// JSON pointer -> origin, for every node of a document.
class SourceMap {
 public:
  void Set(const std::string& pointer, const Origin& origin) { nodes_[pointer] = origin; }
  /// The origin of `pointer` itself (nullptr when it has none: e.g. a default filled in).
  const Origin* Find(const std::string& pointer) const;
  /// The origin of `pointer`, or of its nearest ancestor that has one (nullptr when none).
  const Origin* Nearest(const std::string& pointer) const;
  /// Removes `pointer` and everything under it.
  void EraseSubtree(const std::string& pointer);
  /// Copies the origins of `from` and everything under it to the same places under `to`.
  void CopySubtree(const std::string& from, const std::string& to);

 private:
  std::map<std::string, Origin> nodes_;
};

/// JSON pointer helpers (RFC 6901 escaping).
std::string PointerAppend(const std::string& pointer, const std::string& token);
std::string PointerAppend(const std::string& pointer, size_t index);
std::vector<std::string> PointerTokens(const std::string& pointer);

}  // namespace runx::spec
