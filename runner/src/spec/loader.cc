// Load / Validate: read the file, parse it, apply overrides, check it, resolve it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "base/files.h"
#include "spec/checks.h"
#include "spec/issue.h"
#include "spec/locate.h"
#include "spec/overrides.h"
#include "spec/resolve.h"
#include "spec/schema_check.h"
#include "spec/spec.h"
#include "spec/sweep_check.h"
#include "spec/yaml_reader.h"

namespace runx::spec {

extern const char* const kEmbeddedExperimentSchema;

namespace {

/// Sorted by place (the file's problems by line, then the overrides' in their order), one per
/// message, capped.
std::vector<Diagnostic> Finish(std::vector<Diagnostic> all, const std::string& path,
                               const std::vector<Override>& overrides) {
  const auto key = [&](const Diagnostic& d) {
    if (d.file == path) return std::make_tuple(d.line > 0 ? 1 : 0, d.line, d.column);
    int index = 0;
    while (static_cast<size_t>(index) < overrides.size() && OverrideFile(overrides[index].text) != d.file) ++index;
    return std::make_tuple(2, index, 0);
  };
  std::vector<std::pair<std::tuple<int, int, int>, size_t>> order;
  order.reserve(all.size());
  for (size_t i = 0; i < all.size(); ++i) order.emplace_back(key(all[i]), i);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Diagnostic> sorted;
  size_t kept = 0, run = 0;  // `run`: where the diagnostics of the current place start in `sorted`
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && order[i].first != order[i - 1].first) run = sorted.size();
    Diagnostic& d = all[order[i].second];
    const bool repeated = std::any_of(sorted.begin() + static_cast<std::ptrdiff_t>(run), sorted.end(),
                                      [&](const Diagnostic& u) { return u.message == d.message && u.file == d.file; });
    if (repeated) continue;
    if (++kept > kMaxDiagnostics) {
      run = sorted.size();  // counted, not kept
      continue;
    }
    sorted.push_back(std::move(d));
  }
  if (kept > kMaxDiagnostics) {
    Diagnostic d;
    d.file = path;
    d.message = fmt::format("too many errors; {} more not shown", kept - kMaxDiagnostics);
    sorted.push_back(std::move(d));
  }
  return sorted;
}

struct Outcome {
  std::vector<Diagnostic> diagnostics;
  Experiment experiment;
};

Outcome Process(const std::string& path, const std::string& text, const std::vector<Override>& overrides,
                const SchemaSet& schemas) {
  Outcome out;
  const Source source(path, text);
  auto& diags = out.diagnostics;
  if (text.size() > kMaxFileBytes) {
    diags.push_back(
        source.At({}, fmt::format("file is larger than {} MiB; experiment files are a few KiB", kMaxFileBytes >> 20)));
    return out;
  }
  YamlDocument yaml = ReadYaml(text, {kMaxNodes, kMaxDepth, kMaxValueBytes});
  for (auto& p : yaml.problems) diags.push_back(source.At(p.where, std::move(p.message), std::move(p.notes)));
  if (yaml.fatal) {
    source.AddSourceLines(&diags);
    return out;
  }
  const char* const kShape = "an experiment is a mapping with at least 'name', 'model' and 'data'";
  if (yaml.empty) {
    diags.push_back(
        source.At({}, "empty experiment file; expected a mapping with at least 'name', 'model' and 'data'"));
    return out;
  }
  json& doc = yaml.value;
  if (!doc.is_object()) {
    const Origin* o = yaml.origins.Nearest("");
    diags.push_back(source.At(o ? o->value : Location{},
                              fmt::format("expected a mapping at the top level, got {}", DescribeValue(doc)),
                              {kShape}));
    source.AddSourceLines(&diags);
    return out;
  }

  std::vector<Issue> issues = NormaliseOptimizations(&doc, &yaml.origins);
  for (auto& d : ApplyOverrides(overrides, &doc, &yaml.origins)) diags.push_back(std::move(d));
  for (auto& i : NormaliseOptimizations(&doc, &yaml.origins)) issues.push_back(std::move(i));
  for (auto& i : NormaliseSweepAxes(&doc, &yaml.origins)) issues.push_back(std::move(i));
  for (auto& i : CheckAgainstSchema(schemas.experiment, doc, "", doc)) issues.push_back(std::move(i));
  for (auto& i : CheckTechniques(doc, schemas)) issues.push_back(std::move(i));
  for (auto& i : CheckSemantics(doc, yaml.origins, overrides)) issues.push_back(std::move(i));
  std::vector<std::string> sweep_axes;
  if (doc.contains("sweep") && std::none_of(issues.begin(), issues.end(), [](const Issue& i) {
        return i.pointer == "/sweep" || i.pointer.rfind("/sweep/", 0) == 0;
      })) {
    for (auto& i : CheckSweep(doc, schemas, yaml.origins, overrides, &sweep_axes)) issues.push_back(std::move(i));
  }
  for (auto& i : issues) diags.push_back(FromIssue(source, yaml.origins, overrides, std::move(i)));
  diags = Finish(std::move(diags), path, overrides);
  source.AddSourceLines(&diags);
  if (!diags.empty()) return out;

  FillDefaults(schemas.experiment, schemas.experiment, &doc);
  for (auto& [name, params] : doc["optimizations"].items())
    FillDefaults(schemas.techniques.at(name), schemas.techniques.at(name), &params);
  Experiment& e = out.experiment;
  e.path = path;
  e.text = text;
  e.text_sha256 = Sha256Hex(text);
  e.config = std::move(doc);
  e.config_hash = Sha256Hex(e.config.dump());
  e.sweep_axes = std::move(sweep_axes);
  e.origins = std::move(yaml.origins);
  e.overrides = overrides;
  return out;
}

Outcome ProcessFile(const std::string& path, const std::vector<Override>& overrides, const SchemaSet& schemas) {
  std::string error;
  const auto text = base::ReadFile(path, &error, kMaxFileBytes);  // more than kMaxFileBytes: an error below
  if (!text) {
    Outcome out;
    Diagnostic d;
    d.file = path;
    d.message = "cannot read file: " + error;
    out.diagnostics.push_back(std::move(d));
    return out;
  }
  return Process(path, *text, overrides, schemas);
}

}  // namespace

SchemaSet SchemaSet::Load(const std::vector<std::string>& plugin_dirs) {
  namespace fs = std::filesystem;
  SchemaSet set;
  set.experiment = json::parse(kEmbeddedExperimentSchema);  // checked by the build's own tests
  set.plugin_dirs = plugin_dirs;
  const std::string suffix = ".schema.json";
  for (const auto& dir : plugin_dirs) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      const std::string filename = file.filename().string();
      const std::string technique = filename.substr(0, filename.size() - suffix.size());
      if (set.techniques.count(technique)) continue;
      std::string error;
      try {
        const auto text = base::ReadFile(file.string(), &error, kMaxFileBytes);
        if (!text) throw std::runtime_error(error);
        json schema = json::parse(*text);
        ParseSchemaOrThrow(schema);
        set.techniques.emplace(technique, std::move(schema));
      } catch (const std::exception& e) {
        set.errors.push_back(fmt::format("{}: {}", file.string(), e.what()));
      }
    }
  }
  return set;
}

Experiment Load(const std::string& path, const std::vector<Override>& overrides, const SchemaSet& schemas) {
  Outcome out = ProcessFile(path, overrides, schemas);
  if (!out.diagnostics.empty()) throw SpecError(std::move(out.diagnostics), path);
  return std::move(out.experiment);
}

std::vector<Diagnostic> Validate(const std::string& path, const std::vector<Override>& overrides,
                                 const SchemaSet& schemas) {
  return ProcessFile(path, overrides, schemas).diagnostics;
}

Experiment LoadText(const std::string& path, const std::string& text, const std::vector<Override>& overrides,
                    const SchemaSet& schemas) {
  Outcome out = Process(path, text, overrides, schemas);
  if (!out.diagnostics.empty()) throw SpecError(std::move(out.diagnostics), path);
  return std::move(out.experiment);
}

std::vector<Diagnostic> ValidateText(const std::string& path, const std::string& text,
                                     const std::vector<Override>& overrides, const SchemaSet& schemas) {
  return Process(path, text, overrides, schemas).diagnostics;
}

}  // namespace runx::spec
