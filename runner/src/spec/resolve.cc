#include "spec/resolve.h"

#include <fmt/format.h>

namespace runx::spec {

const json* ResolveRef(const json& root, const json* s) {
  for (int hop = 0; hop < 32 && s && s->is_object() && s->contains("$ref"); ++hop) {
    const json& ref = (*s)["$ref"];
    if (!ref.is_string() || ref.get<std::string>().rfind('#', 0) != 0) return nullptr;
    try {
      s = &root.at(json::json_pointer(ref.get<std::string>().substr(1)));
    } catch (const std::exception&) {
      return nullptr;
    }
  }
  return s && s->is_object() ? s : nullptr;
}

namespace {

constexpr int kMaxDepth = 128;

void Fill(const json& root, const json& schema, json* value, int depth) {
  const json* s = ResolveRef(root, &schema);
  if (!s || depth > kMaxDepth) return;
  if (value->is_object()) {
    const auto props = s->find("properties");
    if (props != s->end() && props->is_object()) {
      for (const auto& [key, sub] : props->items()) {
        const json* r = ResolveRef(root, &sub);
        if (r && !value->contains(key) && r->contains("default")) (*value)[key] = (*r)["default"];
      }
    }
    const auto extra = s->find("additionalProperties");
    for (auto& [key, child] : value->items()) {
      if (!child.is_structured()) continue;
      if (props != s->end() && props->is_object() && props->contains(key))
        Fill(root, (*props)[key], &child, depth + 1);
      else if (extra != s->end() && extra->is_object())
        Fill(root, *extra, &child, depth + 1);
    }
  } else if (value->is_array()) {
    const auto items = s->find("items");
    if (items == s->end() || !items->is_object()) return;
    for (auto& child : *value)
      if (child.is_structured()) Fill(root, *items, &child, depth + 1);
  }
}

}  // namespace

std::vector<Issue> NormaliseOptimizations(json* doc, SourceMap* origins) {
  std::vector<Issue> issues;
  if (!doc->is_object() || !doc->contains("optimizations")) return issues;
  json& opt = (*doc)["optimizations"];
  const std::string base = "/optimizations";
  if (opt.is_null()) {
    opt = json::object();
  } else if (opt.is_object()) {
    for (auto& [name, params] : opt.items())
      if (params.is_null()) params = json::object();
  } else if (opt.is_array()) {
    json map = json::object();
    for (size_t i = 0; i < opt.size(); ++i) {
      const std::string item = PointerAppend(base, i);
      if (!opt[i].is_string()) {
        issues.push_back(
            {item,
             false,
             fmt::format("{} must be a technique name, got {}", Quote(DisplayPath(*doc, item)), DescribeValue(opt[i])),
             {"list techniques by name, e.g. [channels_last, amp], or map each to its parameters"}});
        continue;
      }
      const std::string name = opt[i].get<std::string>();
      const std::string to = PointerAppend(base, name);
      if (map.contains(name)) {
        issues.push_back(
            {item, false, fmt::format("technique {} is listed twice", Quote(name)), {"list each technique once"}});
        continue;
      }
      map[name] = json::object();
      if (const Origin* o = origins->Nearest(item)) {
        Origin moved = *o;
        if (moved.override_index < 0) moved.key = moved.value;  // the name is the key now
        origins->Set(to, moved);
      }
    }
    opt = std::move(map);
  }
  return issues;
}

void FillDefaults(const json& root, const json& schema, json* value) { Fill(root, schema, value, 0); }

}  // namespace runx::spec
