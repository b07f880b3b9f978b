#include "spec/source_map.h"

namespace runx::spec {
namespace {

/// True when `path` is `prefix` itself or lies under it.
bool InSubtree(const std::string& path, const std::string& prefix) {
  return path.compare(0, prefix.size(), prefix) == 0 && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

}  // namespace

const Origin* SourceMap::Find(const std::string& pointer) const {
  const auto it = nodes_.find(pointer);
  return it != nodes_.end() ? &it->second : nullptr;
}

const Origin* SourceMap::Nearest(const std::string& pointer) const {
  std::string p = pointer;
  while (true) {
    const auto it = nodes_.find(p);
    if (it != nodes_.end()) return &it->second;
    if (p.empty()) return nullptr;
    p.erase(p.rfind('/'));
  }
}

void SourceMap::EraseSubtree(const std::string& pointer) {
  auto it = nodes_.lower_bound(pointer);
  while (it != nodes_.end() && it->first.compare(0, pointer.size(), pointer) == 0) {
    it = InSubtree(it->first, pointer) ? nodes_.erase(it) : std::next(it);
  }
}

void SourceMap::CopySubtree(const std::string& from, const std::string& to) {
  std::vector<std::pair<std::string, Origin>> copied;
  for (auto it = nodes_.lower_bound(from); it != nodes_.end() && it->first.compare(0, from.size(), from) == 0; ++it) {
    if (InSubtree(it->first, from)) copied.emplace_back(to + it->first.substr(from.size()), it->second);
  }
  for (auto& [path, origin] : copied) nodes_[path] = origin;
}

std::string PointerAppend(const std::string& pointer, const std::string& token) {
  std::string out = pointer + '/';
  for (const char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string PointerAppend(const std::string& pointer, size_t index) { return pointer + '/' + std::to_string(index); }

std::vector<std::string> PointerTokens(const std::string& pointer) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < pointer.size()) {  // pointer[i] == '/'
    const size_t end = pointer.find('/', i + 1);
    std::string raw = pointer.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1);
    std::string token;
    for (size_t k = 0; k < raw.size(); ++k) {
      if (raw[k] == '~' && k + 1 < raw.size()) {
        token += raw[k + 1] == '1' ? '/' : '~';
        ++k;
      } else {
        token += raw[k];
      }
    }
    tokens.push_back(std::move(token));
    if (end == std::string::npos) break;
    i = end;
  }
  return tokens;
}

}  // namespace runx::spec
