#include "spec/overrides.h"

#include <fmt/format.h>

#include "base/terminal.h"
#include "spec/issue.h"
#include "spec/utf8.h"
#include "spec/yaml_reader.h"

namespace runx::spec {

std::vector<std::string> SplitDots(const std::string& key) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

namespace {

constexpr const char* kUtf8Note =
    "expected text encoded as UTF-8; check the locale of the shell or script that passed it (e.g. LANG=C.UTF-8)";

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool IsIndex(const std::string& token, const json& array) {
  return !token.empty() && token.size() < 10 && token.find_first_not_of("0123456789") == std::string::npos &&
         std::stoul(token) < array.size();
}

Diagnostic Problem(const Override& o, std::string message, std::vector<std::string> notes = {}) {
  Diagnostic d;
  d.file = OverrideFile(o.text);
  d.message = std::move(message);
  d.notes = std::move(notes);
  return d;
}

}  // namespace

std::string OverrideFile(const std::string& text) { return "--set " + base::Printable(EscapeInvalidUtf8(text)); }

std::vector<Diagnostic> ApplyOverrides(const std::vector<Override>& overrides, json* doc, SourceMap* origins) {
  std::vector<Diagnostic> problems;
  for (size_t i = 0; i < overrides.size(); ++i) {
    const Override& o = overrides[i];
    const size_t eq = o.text.find('=');
    if (eq == std::string::npos) {
      problems.push_back(
          Problem(o, fmt::format("expected 'key=value', got {}", Quote(o.text)), {"e.g. --set data.batch_size=128"}));
      continue;
    }
    const std::string key = Trim(o.text.substr(0, eq));
    const std::string text = o.text.substr(eq + 1);
    if (const std::string bad = InvalidUtf8Message(key, "key"); !bad.empty()) {
      problems.push_back(Problem(o, bad, {kUtf8Note}));
      continue;
    }
    if (const std::string bad = InvalidUtf8Message(text, "value"); !bad.empty()) {
      problems.push_back(Problem(o, bad, {kUtf8Note}));
      continue;
    }
    if (text.find_first_of("\n\r") != std::string::npos) {  // YAML would fold it into spaces
      problems.push_back(Problem(o, "the value holds a line break; a --set value is one line",
                                 {"write a list or a mapping on one line, e.g. --set 'model.hidden=[64, 32]'"}));
      continue;
    }
    const auto path = SplitDots(key);
    if (key.empty() || std::any_of(path.begin(), path.end(), [](const auto& p) { return p.empty(); })) {
      problems.push_back(Problem(o, fmt::format("invalid key {}", Quote(key)),
                                 {"expected a dotted path such as 'data.batch_size' or 'optimizations.amp.dtype'"}));
      continue;
    }
    YamlDocument value = ReadYaml(text);
    if (!value.problems.empty()) {
      problems.push_back(Problem(o, fmt::format("cannot parse value {}: {}", Quote(text), value.problems[0].message),
                                 value.problems[0].notes));
      continue;
    }
    json* node = doc;
    std::string pointer;
    std::string failed;
    for (size_t k = 0; k < path.size(); ++k) {
      const std::string& token = path[k];
      const bool last = k + 1 == path.size();
      if (!node->is_object() && !(node->is_array() && IsIndex(token, *node))) {
        failed = fmt::format("cannot set {}: {} is {}, not a mapping", Quote(key), Quote(DisplayPath(*doc, pointer)),
                             DescribeValue(*node));
        break;
      }
      pointer = PointerAppend(pointer, token);
      const bool created = node->is_object() && !node->contains(token);
      json& child = node->is_array() ? (*node)[std::stoul(token)] : (*node)[token];
      if (last) {
        origins->EraseSubtree(pointer);
        child = std::move(value.value);
      } else if (child.is_null()) {
        child = json::object();
      }
      if (last || created) {  // an existing mapping on the way keeps pointing at the file
        Origin origin;
        origin.override_index = static_cast<int>(i);
        origins->Set(pointer, origin);
      }
      node = &child;
    }
    if (!failed.empty()) problems.push_back(Problem(o, failed));
  }
  return problems;
}

}  // namespace runx::spec
