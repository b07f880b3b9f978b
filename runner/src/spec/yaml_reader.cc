#include "spec/yaml_reader.h"

#include <charconv>
#include <list>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "spec/issue.h"
#include "spec/utf8.h"

namespace runx::spec {
namespace {

using nlohmann::json;

constexpr const char* kUtf8Note =
    "expected text encoded as UTF-8; save the file as UTF-8, e.g. with 'iconv -f latin1 -t utf-8'";

/// Stops reading: the rest of the document cannot be trusted.
struct Fatal {
  ReadProblem problem;
};

Location At(const YAML::Mark& mark) {
  if (mark.line < 0 || mark.column < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

bool AllDigits(const std::string& s, size_t from, int base) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = base == 8    ? (c >= '0' && c <= '7')
                    : base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                                 : (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

/// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool LooksLikeFloat(const std::string& s) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  const size_t before = digits();
  size_t after = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    after = digits();
  }
  if (before == 0 && after == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

/// Integer per the YAML 1.2 core schema; false with `error` set when it does not fit.
bool ParseInteger(const std::string& text, json* out, std::string* error) {
  std::string s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.erase(0, 1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    base = s[1] == 'o' ? 8 : 16;
    s.erase(0, 2);
  }
  uint64_t magnitude = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude, base);
  const bool fits = ec == std::errc() && end == s.data() + s.size() && (!negative || magnitude <= uint64_t{1} << 63);
  if (!fits) {
    *error = fmt::format("integer {} is out of range", Quote(text));
    return false;
  }
  if (negative)
    *out = magnitude == uint64_t{1} << 63 ? INT64_MIN : -static_cast<int64_t>(magnitude);
  else if (magnitude <= static_cast<uint64_t>(INT64_MAX))
    *out = static_cast<int64_t>(magnitude);
  else
    *out = magnitude;
  return true;
}

bool ParseFloat(const std::string& text, json* out, std::string* error) {
  const std::string s = !text.empty() && text[0] == '+' ? text.substr(1) : text;
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) {
    *error = fmt::format("number {} is out of range", Quote(text));
    return false;
  }
  *out = value;
  return true;
}

bool IsNull(const std::string& s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }
bool IsTrue(const std::string& s) { return s == "true" || s == "True" || s == "TRUE"; }
bool IsFalse(const std::string& s) { return s == "false" || s == "False" || s == "FALSE"; }
bool IsSpecialFloat(const std::string& t) {
  const std::string s = !t.empty() && (t[0] == '+' || t[0] == '-') ? t.substr(1) : t;
  return s == ".inf" || s == ".Inf" || s == ".INF" || s == ".nan" || s == ".NaN" || s == ".NAN";
}

/// A plain (unquoted, untagged) scalar typed by the YAML 1.2 core schema.
bool ResolvePlain(const std::string& s, json* out, std::string* error) {
  if (IsNull(s))
    *out = nullptr;
  else if (IsTrue(s))
    *out = true;
  else if (IsFalse(s))
    *out = false;
  else if (AllDigits(s, !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0, 10) ||
           (s.rfind("0o", 0) == 0 && AllDigits(s, 2, 8)) || (s.rfind("0x", 0) == 0 && AllDigits(s, 2, 16)))
    return ParseInteger(s, out, error);
  else if (LooksLikeFloat(s))
    return ParseFloat(s, out, error);
  else if (IsSpecialFloat(s)) {
    *error = fmt::format("{} is not a finite number; runx accepts only finite numbers", Quote(s));
    return false;
  } else
    *out = s;
  return true;
}

/// Types a scalar by its tag: "!" (quoted or block scalars) stays a string, "?" (plain) is
/// resolved, the standard `!!str`, `!!int`, `!!float`, `!!bool`, `!!null` are honoured.
bool ResolveScalar(const std::string& tag, const std::string& text, json* out, std::string* error) {
  static const std::string kStd = "tag:yaml.org,2002:";
  if (tag == "!" || tag == kStd + "str") {
    *out = text;
    return true;
  }
  if (tag == "?" || tag.empty()) return ResolvePlain(text, out, error);
  if (tag == kStd + "null" && IsNull(text))
    *out = nullptr;
  else if (tag == kStd + "bool" && (IsTrue(text) || IsFalse(text)))
    *out = IsTrue(text);
  else if (tag == kStd + "int" && AllDigits(text, !text.empty() && (text[0] == '-' || text[0] == '+'), 10))
    return ParseInteger(text, out, error);
  else if (tag == kStd + "float" && LooksLikeFloat(text)) {
    if (!ParseFloat(text, out, error)) return false;
    *out = out->get<double>();
  } else if (tag.rfind(kStd, 0) == 0) {
    *error = fmt::format("{} is not a valid !!{}", Quote(text), tag.substr(kStd.size()));
    return false;
  } else {
    *error = fmt::format("unsupported tag {}", Quote(tag));
    return false;
  }
  return true;
}

/// Builds the JSON document from yaml-cpp's parse events, in place, node by node.
class Builder : public YAML::EventHandler {
 public:
  Builder(YamlDocument* doc, const ReadLimits& limits) : doc_(*doc), limits_(limits) {}

  Location document_start() const { return document_start_; }

  void OnDocumentStart(const YAML::Mark& mark) override { document_start_ = At(mark); }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (ExpectingKey()) return Key(mark, "null", false, "null");
    Place(At(mark), nullptr, anchor, false);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& raw) override {
    if (raw.size() > limits_.max_scalar_bytes) {
      throw Fatal{{At(mark),
                   fmt::format("value of {} bytes is too long; values are limited to {} bytes", raw.size(),
                               limits_.max_scalar_bytes),
                   {}}};
    }
    // Reported here, with its place, and kept as U+FFFD: a document must dump as JSON.
    const bool utf8 = InvalidUtf8At(raw) == std::string::npos;
    if (!utf8 && !Discarding())
      doc_.problems.push_back({At(mark), InvalidUtf8Message(raw, ExpectingKey() ? "key" : "string"), {kUtf8Note}});
    const std::string& text = utf8 ? raw : (fixed_ = ReplaceInvalidUtf8(raw));
    json value;
    std::string error;
    if (!ResolveScalar(tag, text, &value, &error)) {
      doc_.problems.push_back({At(mark), error, {}});
      value = text;
    }
    if (ExpectingKey()) {
      if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchor{"", 1, true, false};
      return Key(mark, text, value.is_string(), DescribeValue(value));
    }
    Place(At(mark), std::move(value), anchor, false);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end() || !it->second.complete || !it->second.usable) {
      throw Fatal{{At(mark),
                   it != anchors_.end() && !it->second.complete
                       ? "alias refers to the node that contains it (a recursive alias)"
                       : "alias refers to an anchor that cannot be used here (on a key or a duplicate key)",
                   {}}};
    }
    const Anchor& a = it->second;
    if (ExpectingKey()) {
      const json& target = doc_.value.at(json::json_pointer(a.pointer));
      if (!target.is_string()) return BadKey(mark, DescribeValue(target), /*container_follows=*/false);
      return Key(mark, target.get<std::string>(), true, "");
    }
    Count(At(mark), a.nodes);
    json copy = doc_.value.at(json::json_pointer(a.pointer));
    const Placed placed = Place(At(mark), std::move(copy), YAML::NullAnchor, false, /*counted=*/true);
    if (!placed.discarded) {  // inside: where the anchor wrote it; the copy itself: the alias
      const Origin root = *doc_.origins.Nearest(placed.pointer);
      doc_.origins.CopySubtree(a.pointer, placed.pointer);
      doc_.origins.Set(placed.pointer, root);
    }
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    if (ExpectingKey()) BadKey(mark, "a list", true);
    Open(mark, json::array(), anchor);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    if (ExpectingKey()) BadKey(mark, "a mapping", true);
    Open(mark, json::object(), anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    json* node = nullptr;
    std::string pointer;
    bool has_key = false;
    std::string key;
    Location key_at;
    bool discard = false;     ///< the value of a duplicate key: read, reported, dropped
    bool bad_key = false;     ///< the pending key was not a string (reported): drop its value
    bool key_placed = false;  ///< the bad key was a container, already read into scratch
    YAML::anchor_t anchor = YAML::NullAnchor;
    size_t nodes_at_start = 0;
  };
  struct Anchor {
    std::string pointer;
    size_t nodes = 0;
    bool complete = false;
    bool usable = true;
  };

  bool ExpectingKey() const { return !stack_.empty() && stack_.back().node->is_object() && !stack_.back().has_key; }
  bool Discarding() const { return !stack_.empty() && stack_.back().discard; }

  void Count(Location at, size_t n) {
    count_ += n;
    if (count_ > limits_.max_nodes) {
      throw Fatal{{at,
                   fmt::format("document expands to more than {} nodes", limits_.max_nodes),
                   {"each alias ('*name') is a copy of its anchor ('&name'), so anchors and aliases that "
                    "nest multiply the document; write the values out instead"}}};
    }
  }

  /// A key that is a list or mapping (or an alias of one): reported; the key and its value are
  /// read but dropped.
  void BadKey(const YAML::Mark& mark, const std::string& got, bool container_follows) {
    if (!Discarding())
      doc_.problems.push_back({At(mark), fmt::format("mapping keys must be strings, got {}", got), {}});
    Frame& top = stack_.back();
    top.has_key = true;
    top.bad_key = true;
    top.key_placed = !container_follows;
    top.key_at = At(mark);
  }

  void Key(const YAML::Mark& mark, const std::string& text, bool is_string, const std::string& got) {
    Count(At(mark), 1);
    if (text.size() > limits_.max_scalar_bytes) {
      throw Fatal{{At(mark), fmt::format("key of {} bytes is too long", text.size()), {}}};
    }
    if (!is_string) {
      doc_.problems.push_back({At(mark),
                               fmt::format("mapping keys must be strings, got {}", got),
                               {fmt::format("quote the key to use it as text: \"{}\"", text)}});
    }
    Frame& top = stack_.back();
    top.has_key = true;
    top.key = text;
    top.key_at = At(mark);
  }

  struct Placed {
    std::string pointer;
    bool discarded = false;
  };

  /// Stores `value` where the parser is (root, next list item, or the value of the pending key).
  Placed Place(Location at, json value, YAML::anchor_t anchor, bool container, bool counted = false) {
    if (!counted) Count(at, 1);
    json* slot = nullptr;
    std::string pointer;
    Origin origin;
    origin.value = at;
    bool discard = false;
    if (stack_.empty()) {
      doc_.value = std::move(value);
      slot = &doc_.value;
      doc_.empty = false;
    } else if (Frame& top = stack_.back(); top.node->is_array()) {
      pointer = PointerAppend(top.pointer, top.node->size());
      top.node->push_back(std::move(value));
      slot = &top.node->back();
      discard = top.discard;
    } else if (top.bad_key && container && top.node->is_object() && !top.key_placed) {
      top.key_placed = true;  // the key itself, a list or mapping
      scratch_.push_back(std::move(value));
      slot = &scratch_.back();
      discard = true;
    } else if (top.bad_key) {
      top.has_key = top.bad_key = top.key_placed = false;
      scratch_.push_back(std::move(value));
      slot = &scratch_.back();
      discard = true;
    } else {
      top.has_key = false;
      pointer = PointerAppend(top.pointer, top.key);
      origin.key = top.key_at;
      if (value.is_null() && !container && at.line != top.key_at.line) origin.value = top.key_at;
      discard = top.discard || top.node->contains(top.key);
      if (discard && !top.discard) {
        const Origin* first = doc_.origins.Nearest(pointer);
        const std::string where = top.pointer.empty() ? "" : " in " + Quote(DisplayPath(doc_.value, top.pointer));
        doc_.problems.push_back({top.key_at,
                                 fmt::format("duplicate key {}{}", Quote(top.key), where),
                                 {fmt::format("first defined at line {}", first ? first->key.line : 0)}});
      }
      if (discard) {
        scratch_.push_back(std::move(value));
        slot = &scratch_.back();
      } else {
        slot = &((*top.node)[top.key] = std::move(value));
      }
    }
    if (!discard) doc_.origins.Set(pointer, origin);
    if (anchor != YAML::NullAnchor) {
      Anchor& a = anchors_[anchor];
      a = Anchor{pointer, 1, !container, !discard};
    }
    if (container) {
      if (stack_.size() >= limits_.max_depth) {
        throw Fatal{{at, fmt::format("mappings and lists nest more than {} levels deep", limits_.max_depth), {}}};
      }
      Frame frame;
      frame.node = slot;
      frame.pointer = pointer;
      frame.discard = discard;
      frame.anchor = anchor;
      frame.nodes_at_start = count_;
      stack_.push_back(std::move(frame));
    }
    return {pointer, discard};
  }

  void Open(const YAML::Mark& mark, json empty, YAML::anchor_t anchor) {
    Place(At(mark), std::move(empty), anchor, true);
  }

  void Close() {
    const Frame top = stack_.back();
    stack_.pop_back();
    if (top.anchor != YAML::NullAnchor) {
      Anchor& a = anchors_[top.anchor];
      a.complete = true;
      a.nodes = count_ - top.nodes_at_start + 1;
    }
  }

  YamlDocument& doc_;
  const ReadLimits& limits_;
  std::vector<Frame> stack_;
  std::list<json> scratch_;
  std::map<YAML::anchor_t, Anchor> anchors_;
  size_t count_ = 0;
  Location document_start_;
  std::string fixed_;  ///< the current scalar with its invalid UTF-8 replaced
};

/// A hint for yaml-cpp's terse syntax errors.
std::vector<std::string> SyntaxHints(const std::string& message) {
  if (message == YAML::ErrorMsg::MAP_VALUE || message == YAML::ErrorMsg::BLOCK_ENTRY ||
      message == YAML::ErrorMsg::END_OF_MAP || message == YAML::ErrorMsg::END_OF_SEQ)
    return {"check the indentation of this line against the lines above; quote values that contain ': '"};
  if (message == YAML::ErrorMsg::END_OF_SEQ_FLOW) return {"a '[' here has no matching ']'"};
  if (message == YAML::ErrorMsg::END_OF_MAP_FLOW) return {"a '{' here has no matching '}'"};
  if (message == YAML::ErrorMsg::UNKNOWN_ANCHOR) return {"define the anchor ('&name') before its alias ('*name')"};
  if (message == YAML::ErrorMsg::TAB_IN_INDENTATION) return {"YAML indents with spaces, not tabs"};
  if (message == YAML::ErrorMsg::EOF_IN_SCALAR) return {"a quoted string here is not closed"};
  return {};
}

}  // namespace

YamlDocument ReadYaml(const std::string& text, const ReadLimits& limits) {
  YamlDocument doc;
  std::istringstream in(text);
  // When reading stops, what was reported before it may be an artefact of the same mistake
  // (yaml-cpp reads the '2' of an unclosed '[1, 2' as a key): report the stop alone.
  const auto stop = [&doc](ReadProblem problem) {
    doc.fatal = true;
    doc.problems = {std::move(problem)};
  };
  try {
    YAML::Parser parser(in);
    Builder builder(&doc, limits);
    if (!parser.HandleNextDocument(builder)) return doc;
    if (doc.value.is_null()) doc.empty = true;
    YamlDocument rest;
    Builder second(&rest, limits);
    if (parser.HandleNextDocument(second)) {
      doc.problems.push_back({second.document_start(),
                              "file holds more than one YAML document",
                              {"runx reads one experiment per file; remove the '---' or split the file"}});
    }
  } catch (const Fatal& fatal) {
    stop(fatal.problem);
  } catch (const YAML::DeepRecursion& e) {
    stop({At(e.mark), fmt::format("mappings and lists nest more than {} levels deep", limits.max_depth), {}});
  } catch (const YAML::Exception& e) {
    stop({At(e.mark), e.msg, SyntaxHints(e.msg)});
  } catch (const std::exception& e) {  // defensive: no input may escape as a crash
    stop({{}, fmt::format("cannot read YAML: {}", e.what()), {}});
  }
  return doc;
}

}  // namespace runx::spec
