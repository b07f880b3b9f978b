#include "spec/locate.h"

#include <sstream>

#include "spec/overrides.h"

namespace runx::spec {

Source::Source(std::string path, const std::string& text) : path_(std::move(path)) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines_.push_back(std::move(line));
  }
}

Diagnostic Source::At(Location where, std::string message, std::vector<std::string> notes) const {
  Diagnostic d;
  d.file = path_;
  d.line = where.line;
  d.column = where.column;
  d.message = std::move(message);
  d.notes = std::move(notes);
  return d;
}

void Source::AddSourceLines(std::vector<Diagnostic>* diagnostics) const {
  for (auto& d : *diagnostics)
    if (d.file == path_ && d.line > 0 && static_cast<size_t>(d.line) <= lines_.size())
      d.source_line = lines_[d.line - 1];
}

Diagnostic FromIssue(const Source& source, const SourceMap& origins, const std::vector<Override>& overrides,
                     Issue issue) {
  const Origin* o = origins.Nearest(issue.pointer);
  if (o && o->override_index >= 0 && static_cast<size_t>(o->override_index) < overrides.size()) {
    Diagnostic d;
    d.file = OverrideFile(overrides[static_cast<size_t>(o->override_index)].text);
    d.message = std::move(issue.message);
    d.notes = std::move(issue.notes);
    return d;
  }
  const Location where = !o || o->override_index >= 0      ? Location{}
                         : issue.at_key && o->key.line > 0 ? o->key
                                                           : o->value;
  return source.At(where, std::move(issue.message), std::move(issue.notes));
}

}  // namespace runx::spec
