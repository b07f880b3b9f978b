#include "spec/schema_explain.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "spec/resolve.h"
#include "spec/source_map.h"
#include "spec/spec.h"
#include "spec/utf8.h"

namespace runx::spec {
namespace {

constexpr int kMaxMatchDepth = 128;

const json& EmptySchema() {
  static const json empty = json::object();
  return empty;
}

bool HasType(const std::string& type, const json& v) {
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  return true;
}

std::string TypeNoun(const std::string& type) {
  if (type == "integer") return "an integer";
  if (type == "number") return "a number";
  if (type == "string") return "a string";
  if (type == "boolean") return "a boolean";
  if (type == "object") return "a mapping";
  if (type == "array") return "a list";
  return type;  // "null"
}

std::vector<std::string> Types(const json& s) {
  std::vector<std::string> types;
  const auto it = s.find("type");
  if (it == s.end()) return types;
  if (it->is_string()) types.push_back(it->get<std::string>());
  if (it->is_array())
    for (const auto& t : *it)
      if (t.is_string()) types.push_back(t.get<std::string>());
  return types;
}

std::string Str(const json& s, const char* key) {
  const auto it = s.find(key);
  return it != s.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> Strings(const json& s, const char* key) {
  std::vector<std::string> out;
  const auto it = s.find(key);
  if (it != s.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

/// The schema's `x-aliases` entry for `got` (a common wrong word: 'gpu' -> 'cuda'), else the
/// closest of `candidates`.
std::string Guess(const json& s, const std::string& got, const std::vector<std::string>& candidates) {
  if (const auto aliases = s.find("x-aliases"); aliases != s.end() && aliases->is_object()) {
    const auto it = aliases->find(got);
    if (it != aliases->end() && it->is_string()) return it->get<std::string>();
  }
  return DidYouMean(got, candidates);
}

std::string WithGuess(std::string note, const std::string& guess) {
  return guess.empty() ? note : fmt::format("{}; did you mean {}?", note, Quote(guess));
}

/// "expected one of 'a', 'b'; did you mean 'a'?"
std::string ExpectedNote(const json& s, const std::vector<std::string>& expected, const std::string& got) {
  return WithGuess(
      expected.size() == 1 ? "expected " + Quote(expected.front()) : "expected one of " + QuotedList(expected),
      Guess(s, got, expected));
}

/// The bounds of a number schema: ">= 1", "> 0", "< 1".
std::vector<std::string> Bounds(const json& s) {
  std::vector<std::string> out;
  const auto bound = [&](const char* key, const char* exclusive_key, const char* op, const char* strict_op) {
    const auto it = s.find(key);
    const auto ex = s.find(exclusive_key);
    if (ex != s.end() && ex->is_number())
      out.push_back(fmt::format("{} {}", strict_op, ex->dump()));
    else if (it != s.end() && it->is_number())
      out.push_back(
          fmt::format("{} {}", ex != s.end() && ex->is_boolean() && ex->get<bool>() ? strict_op : op, it->dump()));
  };
  bound("minimum", "exclusiveMinimum", ">=", ">");
  bound("maximum", "exclusiveMaximum", "<=", "<");
  return out;
}

/// What the user names the value at `pointer`, for "unknown <noun> 'x'": the schema's `x-noun`,
/// else its key (the parent's key for a `name`: `model.name` -> "model").
std::string Noun(const json& s, const std::string& pointer) {
  std::string noun = Str(s, "x-noun");
  if (!noun.empty()) return noun;
  auto tokens = PointerTokens(pointer);
  while (!tokens.empty() && tokens.back().find_first_not_of("0123456789") == std::string::npos) tokens.pop_back();
  if (tokens.empty()) return "value";
  noun = tokens.back() == "name" && tokens.size() >= 2 ? tokens[tokens.size() - 2] : tokens.back();
  for (auto& c : noun) {
    if (c == '_')
      c = ' ';
    else if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.')
      return "value";
  }
  return noun;
}

}  // namespace

SchemaExplainer::SchemaExplainer(const json& root, const json& doc, std::string base)
    : root_(root), doc_(doc), base_(std::move(base)) {}

std::string SchemaExplainer::Path(const std::string& pointer) const {
  const std::string path = DisplayPath(doc_, pointer);
  return path.empty() ? "the experiment" : Quote(path);
}

const json& SchemaExplainer::Resolve(const json& schema) const {
  const json* s = ResolveRef(root_, &schema);
  return s ? *s : EmptySchema();
}

bool SchemaExplainer::PatternMatches(const std::string& pattern, const std::string& text) const {
  auto it = regexes_.find(pattern);
  if (it == regexes_.end()) {
    try {
      it = regexes_.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
    } catch (const std::regex_error&) {
      return true;  // valijson could not use it either
    }
  }
  return std::regex_search(text, it->second);
}

const json* SchemaExplainer::Child(const json& schema, const json& parent, const std::string& token,
                                   bool branches) const {
  const json& s = Resolve(schema);
  if (parent.is_object()) {
    if (const auto p = s.find("properties"); p != s.end() && p->is_object() && p->contains(token)) return &(*p)[token];
    if (const auto pp = s.find("patternProperties"); pp != s.end() && pp->is_object())
      for (const auto& [pattern, sub] : pp->items())
        if (PatternMatches(pattern, token)) return &sub;
    if (const auto ap = s.find("additionalProperties"); ap != s.end() && ap->is_object()) return &*ap;
  } else if (parent.is_array()) {
    const size_t index = std::strtoul(token.c_str(), nullptr, 10);
    if (const auto items = s.find("items"); items != s.end()) {
      if (items->is_object()) return &*items;
      if (items->is_array() && index < items->size()) return &(*items)[index];
      if (const auto ai = s.find("additionalItems"); ai != s.end() && ai->is_object()) return &*ai;
    }
  }
  if (branches) {
    for (const char* key : {"allOf", "anyOf", "oneOf"}) {
      if (const auto b = s.find(key); b != s.end() && b->is_array())
        for (const auto& sub : *b)
          if (const json* found = Child(sub, parent, token, true)) return found;
    }
  }
  return nullptr;
}

const json* SchemaExplainer::SchemaAt(const std::string& pointer) const {
  const json* schema = &root_;
  std::string at = base_;
  for (const auto& token : PointerTokens(pointer)) {
    const json* parent = nullptr;
    try {
      parent = &doc_.at(json::json_pointer(at));
    } catch (const std::exception&) {
      return nullptr;
    }
    schema = Child(*schema, *parent, token, true);
    if (!schema) return nullptr;
    at = PointerAppend(at, token);
  }
  return schema;
}

bool SchemaExplainer::Explain(const std::string& pointer, std::vector<Issue>* out) const {
  const json* schema = SchemaAt(pointer);
  const std::string full = base_ + pointer;
  const json* value = nullptr;
  try {
    value = &doc_.at(json::json_pointer(full));
  } catch (const std::exception&) {
    return false;
  }
  return schema && ExplainAt(*schema, *value, full, out);
}

bool SchemaExplainer::ExplainAt(const json& schema, const json& v, const std::string& pointer,
                                std::vector<Issue>* out) const {
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) out->push_back({pointer, false, fmt::format("{} is not allowed here", Path(pointer)), {}});
    return !schema.get<bool>();
  }
  const json& s = Resolve(schema);
  const auto add = [&](Issue issue) { out->push_back(std::move(issue)); };

  const auto types = Types(s);
  if (!types.empty() && std::none_of(types.begin(), types.end(), [&](const auto& t) { return HasType(t, v); })) {
    std::vector<std::string> nouns;
    for (const auto& t : types) nouns.push_back(TypeNoun(t));
    Issue issue{
        pointer, false, fmt::format("{} must be {}, got {}", Path(pointer), OrList(nouns), DescribeValue(v)), {}};
    static const std::vector<std::string> kYaml11Booleans = {"yes", "no",  "on", "off", "y",
                                                             "n",   "Yes", "No", "On",  "Off"};
    if (v.is_string() && std::find(types.begin(), types.end(), "boolean") != types.end() &&
        std::find(kYaml11Booleans.begin(), kYaml11Booleans.end(), v.get<std::string>()) != kYaml11Booleans.end())
      issue.notes.push_back(
          fmt::format("YAML 1.2 reads {} as a string; write true or false", Quote(v.get<std::string>())));
    if (const std::string hint = Str(s, "x-hint"); !hint.empty()) issue.notes.push_back(hint);
    add(std::move(issue));
    return true;
  }
  if (const auto e = s.find("enum"); e != s.end() && e->is_array() && std::find(e->begin(), e->end(), v) == e->end()) {
    std::vector<std::string> names;
    for (const auto& item : *e) names.push_back(item.is_string() ? item.get<std::string>() : item.dump());
    if (v.is_string()) {
      add({pointer,
           false,
           fmt::format("unknown {} {}", Noun(s, pointer), Quote(v.get<std::string>())),
           {ExpectedNote(s, names, v.get<std::string>())}});
    } else {
      std::vector<std::string> shown;
      for (const auto& item : *e) shown.push_back(ValueText(item));
      add({pointer, false, fmt::format("{} must be {}, got {}", Path(pointer), OrList(shown), DescribeValue(v)), {}});
    }
    return true;
  }
  if (const auto c = s.find("const"); c != s.end() && *c != v) {
    add({pointer, false, fmt::format("{} must be {}, got {}", Path(pointer), ValueText(*c), DescribeValue(v)), {}});
    return true;
  }

  if (v.is_number()) CheckNumber(s, v, pointer, out);
  if (v.is_string()) CheckString(s, v, pointer, out);
  if (v.is_array()) CheckArray(s, v, pointer, out);
  if (v.is_object()) CheckObject(s, v, pointer, out);

  bool whole = false;
  if (const auto all = s.find("allOf"); all != s.end() && all->is_array())
    for (const auto& sub : *all) whole = ExplainAt(sub, v, pointer, out) || whole;
  for (const char* key : {"anyOf", "oneOf"}) {
    const auto alternatives = s.find(key);
    if (alternatives == s.end() || !alternatives->is_array()) continue;
    size_t matched = 0;
    std::vector<std::string> described;
    for (const auto& sub : *alternatives) {
      matched += Matches(sub, v, 0);
      for (auto& d : Describe(sub)) described.push_back(std::move(d));
    }
    if (matched == 0) {
      add({pointer,
           false,
           fmt::format("{} must be {}, got {}", Path(pointer), OrList(described), DescribeValue(v)),
           {}});
      whole = true;
    } else if (matched > 1 && std::string(key) == "oneOf") {
      add({pointer, false, fmt::format("{} matches more than one of {}", Path(pointer), OrList(described)), {}});
      whole = true;
    }
  }
  if (const auto n = s.find("not"); n != s.end() && Matches(*n, v, 0)) {
    add({pointer, false, fmt::format("{} must not be {}", Path(pointer), OrList(Describe(*n))), {}});
    whole = true;
  }
  if (const auto cond = s.find("if"); cond != s.end()) {
    const auto branch = s.find(Matches(*cond, v, 0) ? "then" : "else");
    if (branch != s.end()) whole = ExplainAt(*branch, v, pointer, out) || whole;
  }
  return whole;
}

void SchemaExplainer::CheckNumber(const json& s, const json& v, const std::string& pointer,
                                  std::vector<Issue>* out) const {
  const auto fail = [&](const char* op, const json& bound) {
    out->push_back(
        {pointer, false, fmt::format("{} must be {} {}, got {}", Path(pointer), op, bound.dump(), v.dump()), {}});
  };
  const auto ex_min = s.find("exclusiveMinimum"), ex_max = s.find("exclusiveMaximum");
  const bool ex_min_flag = ex_min != s.end() && ex_min->is_boolean() && ex_min->get<bool>();
  const bool ex_max_flag = ex_max != s.end() && ex_max->is_boolean() && ex_max->get<bool>();
  if (const auto m = s.find("minimum"); m != s.end() && m->is_number() && (ex_min_flag ? v <= *m : v < *m))
    return fail(ex_min_flag ? ">" : ">=", *m);
  if (ex_min != s.end() && ex_min->is_number() && v <= *ex_min) return fail(">", *ex_min);
  if (const auto m = s.find("maximum"); m != s.end() && m->is_number() && (ex_max_flag ? v >= *m : v > *m)) {
    fail(ex_max_flag ? "<" : "<=", *m);
    if (const auto why = s.find("x-limit"); why != s.end() && why->is_string())
      out->back().notes.push_back(why->get<std::string>());
    return;
  }
  if (ex_max != s.end() && ex_max->is_number() && v >= *ex_max) return fail("<", *ex_max);
  if (const auto m = s.find("multipleOf"); m != s.end() && m->is_number() && m->get<double>() > 0) {
    const double q = v.get<double>() / m->get<double>();
    if (std::fabs(q - std::round(q)) > 1e-9)
      out->push_back(
          {pointer, false, fmt::format("{} must be a multiple of {}, got {}", Path(pointer), m->dump(), v.dump()), {}});
  }
}

void SchemaExplainer::CheckString(const json& s, const json& v, const std::string& pointer,
                                  std::vector<Issue>* out) const {
  const std::string text = v.get<std::string>();
  const size_t length = Utf8Length(text);
  if (const auto m = s.find("minLength"); m != s.end() && m->is_number_unsigned() && length < m->get<size_t>()) {
    out->push_back({pointer,
                    false,
                    m->get<size_t>() == 1 ? fmt::format("{} must not be empty", Path(pointer))
                                          : fmt::format("{} must be at least {} characters long, got {}", Path(pointer),
                                                        m->dump(), length),
                    {}});
    return;
  }
  if (const auto m = s.find("maxLength"); m != s.end() && m->is_number_unsigned() && length > m->get<size_t>()) {
    out->push_back({pointer,
                    false,
                    fmt::format("{} must be at most {} characters long, got {}", Path(pointer), m->dump(), length),
                    {}});
    return;
  }
  const std::string pattern = Str(s, "pattern");
  if (!pattern.empty() && !PatternMatches(pattern, text)) {
    const auto suggest = Strings(s, "x-suggest");
    const std::string expected = Str(s, "x-expected");
    const std::string note = "expected " + (expected.empty() ? "a string matching " + Quote(pattern) : expected);
    out->push_back({pointer,
                    false,
                    fmt::format("{} {} {}", suggest.empty() ? "invalid" : "unknown", Noun(s, pointer), Quote(text)),
                    {WithGuess(note, Guess(s, text, suggest))}});
  }
}

void SchemaExplainer::CheckArray(const json& s, const json& v, const std::string& pointer,
                                 std::vector<Issue>* out) const {
  const auto items = [](size_t n) { return fmt::format("{} item{}", n, n == 1 ? "" : "s"); };
  if (const auto m = s.find("minItems"); m != s.end() && m->is_number_unsigned() && v.size() < m->get<size_t>()) {
    out->push_back({pointer,
                    false,
                    v.empty() && m->get<size_t>() == 1 ? fmt::format("{} must not be empty", Path(pointer))
                                                       : fmt::format("{} must have at least {}, got {}", Path(pointer),
                                                                     items(m->get<size_t>()), v.size()),
                    {}});
  }
  size_t max = SIZE_MAX;
  if (const auto m = s.find("maxItems"); m != s.end() && m->is_number_unsigned()) max = m->get<size_t>();
  if (const auto it = s.find("items"), ai = s.find("additionalItems");
      it != s.end() && it->is_array() && ai != s.end() && ai->is_boolean() && !ai->get<bool>())
    max = std::min(max, it->size());
  if (v.size() > max)
    out->push_back(
        {pointer, false, fmt::format("{} must have at most {}, got {}", Path(pointer), items(max), v.size()), {}});
  if (const auto u = s.find("uniqueItems"); u != s.end() && u->is_boolean() && u->get<bool>()) {
    for (size_t i = 1; i < v.size(); ++i) {
      if (std::find(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v[i]) !=
          v.begin() + static_cast<std::ptrdiff_t>(i)) {
        out->push_back({PointerAppend(pointer, i),
                        false,
                        fmt::format("{} repeats {}", Path(pointer), ValueText(v[i])),
                        {"list each item once"}});
        break;
      }
    }
  }
  if (const auto c = s.find("contains");
      c != s.end() && std::none_of(v.begin(), v.end(), [&](const json& x) { return Matches(*c, x, 0); }))
    out->push_back({pointer, false, fmt::format("{} must contain {}", Path(pointer), OrList(Describe(*c))), {}});
}

void SchemaExplainer::CheckObject(const json& s, const json& v, const std::string& pointer,
                                  std::vector<Issue>* out) const {
  const std::string path = DisplayPath(doc_, pointer);
  const std::string in = path.empty() ? "" : " in " + Quote(path);
  const auto props = s.find("properties");
  std::vector<std::string> known;
  if (props != s.end() && props->is_object())
    for (const auto& [key, sub] : props->items()) known.push_back(key);
  const auto ap = s.find("additionalProperties");
  const bool closed = ap != s.end() && ap->is_boolean() && !ap->get<bool>();
  const auto pp = s.find("patternProperties");
  std::vector<std::string> unknown;
  for (const auto& [key, value] : v.items()) {
    if (!closed || std::find(known.begin(), known.end(), key) != known.end()) continue;
    bool patterned = false;
    if (pp != s.end() && pp->is_object())
      for (const auto& [pattern, sub] : pp->items()) patterned = patterned || PatternMatches(pattern, key);
    if (!patterned) unknown.push_back(key);
  }
  for (const auto& key : Strings(s, "required")) {
    if (v.contains(key)) continue;
    // 'batchsize' given for the required 'batch_size': the unknown key's message says it all.
    if (std::any_of(unknown.begin(), unknown.end(), [&](const auto& u) { return DidYouMean(u, known) == key; }))
      continue;
    Issue issue{pointer, true, fmt::format("missing required key {}{}", Quote(key), in), {}};
    if (props != s.end() && props->is_object() && props->contains(key)) {
      const std::string description = Str(Resolve((*props)[key]), "description");
      if (!description.empty()) issue.notes.push_back(fmt::format("{}: {}", Quote(key), description));
    }
    out->push_back(std::move(issue));
  }
  for (const auto& key : unknown) {
    out->push_back({PointerAppend(pointer, key),
                    true,
                    fmt::format("unknown key {}{}", Quote(key), in),
                    {known.empty() ? fmt::format("{} takes no keys", path.empty() ? "it" : Quote(path))
                                   : ExpectedNote(json::object(), known, key)}});
  }
  const auto count = [](size_t n) { return fmt::format("{} key{}", n, n == 1 ? "" : "s"); };
  if (const auto m = s.find("minProperties"); m != s.end() && m->is_number_unsigned() && v.size() < m->get<size_t>())
    out->push_back({pointer,
                    false,
                    fmt::format("{} must have at least {}, got {}", Path(pointer), count(m->get<size_t>()), v.size()),
                    {}});
  if (const auto m = s.find("maxProperties"); m != s.end() && m->is_number_unsigned() && v.size() > m->get<size_t>())
    out->push_back({pointer,
                    false,
                    fmt::format("{} must have at most {}, got {}", Path(pointer), count(m->get<size_t>()), v.size()),
                    {}});
  if (const auto deps = s.find("dependencies"); deps != s.end() && deps->is_object()) {
    for (const auto& [key, needs] : deps->items()) {
      if (!v.contains(key) || !needs.is_array()) continue;
      for (const auto& need : needs)
        if (need.is_string() && !v.contains(need.get<std::string>()))
          out->push_back({PointerAppend(pointer, key),
                          true,
                          fmt::format("{} needs {}{}", Quote(key), Quote(need.get<std::string>()), in),
                          {}});
    }
  }
}

bool SchemaExplainer::Matches(const json& schema, const json& value, int depth) const {
  if (depth > kMaxMatchDepth) return false;
  std::vector<Issue> issues;
  ExplainAt(schema, value, "", &issues);
  if (!issues.empty()) return false;
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      const json* sub = Child(schema, value, key, false);
      if (sub && !Matches(*sub, child, depth + 1)) return false;
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      const json* sub = Child(schema, value, std::to_string(i), false);
      if (sub && !Matches(*sub, value[i], depth + 1)) return false;
    }
  }
  return true;
}

std::vector<std::string> SchemaExplainer::Describe(const json& schema) const {
  if (schema.is_boolean()) return {schema.get<bool>() ? "anything" : "nothing"};
  const json& s = Resolve(schema);
  std::vector<std::string> out;
  if (const auto e = s.find("enum"); e != s.end() && e->is_array()) {
    for (const auto& item : *e) out.push_back(ValueText(item));
    return out;
  }
  if (const auto c = s.find("const"); c != s.end()) return {ValueText(*c)};
  const auto bounds = Bounds(s);
  std::string suffix;
  for (const auto& b : bounds) suffix += (suffix.empty() ? " " : " and ") + b;
  const std::string pattern = Str(s, "pattern");
  for (const auto& t : Types(s)) {
    std::string d = TypeNoun(t);
    if ((t == "number" || t == "integer") && !suffix.empty()) d += suffix;
    if (t == "string" && !pattern.empty()) d += " matching " + Quote(pattern);
    out.push_back(d);
  }
  if (out.empty()) {
    for (const char* key : {"anyOf", "oneOf"})
      if (const auto alt = s.find(key); alt != s.end() && alt->is_array())
        for (const auto& sub : *alt)
          for (auto& d : Describe(sub)) out.push_back(std::move(d));
  }
  if (out.empty()) out.push_back(suffix.empty() ? "a value" : "a number" + suffix);
  return out;
}

}  // namespace runx::spec
