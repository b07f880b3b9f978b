#include "spec/checks.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "base/files.h"
#include "spec/overrides.h"
#include "spec/schema_check.h"

namespace runx::spec {
namespace {

/// Where a value was set, for ordering ("the second of two") and for notes.
struct Place {
  std::tuple<int, int, int> order;  ///< file before overrides; then line, column
  std::string text;                 ///< "at line 12" or "by --set train.steps=5"
};

Place PlaceOf(const std::string& pointer, const SourceMap& origins, const std::vector<Override>& overrides) {
  const Origin* o = origins.Nearest(pointer);
  if (!o) return {{0, 0, 0}, "in the file"};
  if (o->override_index >= 0)
    return {{1, o->override_index, 0}, "by " + OverrideFile(overrides[static_cast<size_t>(o->override_index)].text)};
  const Location at = o->key.line > 0 ? o->key : o->value;
  return {{0, at.line, at.column}, fmt::format("at line {}", at.line)};
}

/// The keys of `data` that only some sources read, and those sources.
struct SourceKeys {
  const char* key;
  std::vector<std::string> sources;
};

const std::vector<SourceKeys>& KeysBySource() {
  static const std::vector<SourceKeys> keys = {
      {"labels", {"memmap"}},        {"eval_path", {"memmap"}},
      {"eval_labels", {"memmap"}},   {"dtype", {"memmap"}},
      {"label_dtype", {"memmap"}},   {"scale", {"memmap"}},
      {"normalize", {"memmap"}},     {"placement", {"synthetic", "fashion-mnist"}},
      {"produce_ms", {"synthetic"}}, {"tokenizer", {"text"}},
      {"seq_len", {"text"}},         {"val_fraction", {"text"}}};
  return keys;
}

/// Rules of the data section that involve several keys.
std::vector<Issue> CheckData(const json& data) {
  std::vector<Issue> issues;
  const json source = data.value("source", json());
  if (!source.is_string()) return issues;  // the schema says what is wrong
  const std::string name = source.get<std::string>();
  if (name == "synthetic") {
    for (const char* key : {"shape", "num_classes"}) {
      if (data.contains(key)) continue;
      issues.push_back({"/data", true, fmt::format("missing required key '{}' in 'data'", key),
                        {"synthetic data needs 'shape' and 'num_classes', e.g. shape: [3, 224, 224], num_classes: 1000"}});
    }
  }
  if (name == "memmap") {
    for (const char* key : {"path", "labels"}) {
      if (data.contains(key)) continue;
      issues.push_back({"/data", true, fmt::format("missing required key '{}' in 'data'", key),
                        {"memmap data needs 'path' (the inputs file) and 'labels' (the labels file), e.g. "
                         "path: train_inputs.npy, labels: train_labels.npy; 'runx data pack' writes them"}});
    }
    if (data.contains("eval_path") != data.contains("eval_labels")) {
      const bool has_path = data.contains("eval_path");
      issues.push_back({has_path ? "/data/eval_path" : "/data/eval_labels", true,
                        fmt::format("'data.{}' needs 'data.{}'", has_path ? "eval_path" : "eval_labels",
                                    has_path ? "eval_labels" : "eval_path"),
                        {"the held-out split is two files: its inputs (eval_path) and their labels (eval_labels)"}});
    }
  }
  if (name == "text")
    for (auto& issue : CheckTextData(data)) issues.push_back(std::move(issue));
  for (const auto& [key, sources] : KeysBySource()) {
    if (!data.contains(key) || std::find(sources.begin(), sources.end(), name) != sources.end()) continue;
    issues.push_back({PointerAppend("/data", key), true,
                      fmt::format("'data.{}' is not used by {} data", key, name),
                      {fmt::format("'data.{}' is for {} data", key, OrList(sources))}});
  }
  if (name == "synthetic" && data.contains("produce_ms") && data.value("placement", json("device")) != "host")
    issues.push_back({"/data/produce_ms", true, "'data.produce_ms' needs 'data.placement: host'",
                      {"produce_ms simulates the host work of making a batch; device-resident synthetic data has none"}});
  return issues;
}

/// The keys of `model` that only a python model reads (its builder and the builder's arguments).
std::vector<Issue> CheckModelKeys(const json& model) {
  std::vector<Issue> issues;
  const json name = model.value("name", json());
  if (!name.is_string() || name == "python") return issues;  // the schema says what is wrong
  for (const char* key : {"builder", "kwargs"}) {
    if (!model.contains(key)) continue;
    issues.push_back({PointerAppend("/model", key), true,
                      fmt::format("'model.{}' is not used by model {}", key, Quote(name.get<std::string>())),
                      {"'builder' and 'kwargs' name the function of a python model and its keyword arguments, e.g. "
                       "model: {name: python, path: model.py, builder: build, kwargs: {num_classes: 10}}"}});
  }
  return issues;
}

/// Input files that exist but are no files: a FIFO never ends and waits for a writer, a device
/// such as /dev/zero never ends; runx reads and hashes its inputs whole. (A missing file is the
/// trial's error: it may be made after validation, or exist only where the trial runs.)
std::vector<Issue> CheckInputPaths(const json& doc) {
  std::vector<Issue> issues;
  const auto check = [&](const std::string& pointer, const json* value) {
    if (!value || !value->is_string()) return;
    const std::string kind = base::NotRegularFileKind(value->get<std::string>());
    if (kind.empty() || kind == "a directory") return;  // a folder's own checks judge folders
    std::string key = pointer.substr(1);
    std::replace(key.begin(), key.end(), '/', '.');
    issues.push_back({pointer, false, fmt::format("'{}' is {}, not a regular file", key, kind),
                      {"runx reads and hashes its input files whole; give the path of a regular file"}});
  };
  const auto at = [&](const char* pointer) -> const json* {
    try {
      const json::json_pointer p(pointer);
      return doc.contains(p) ? &doc.at(p) : nullptr;
    } catch (const json::exception&) {  // a section of another type: the schema says so
      return nullptr;
    }
  };
  for (const char* pointer : {"/model/path", "/data/path", "/data/labels", "/data/eval_path", "/data/eval_labels",
                              "/optimizations/compiled_step/package"})
    check(pointer, at(pointer));
  return issues;
}

}  // namespace

std::string TechniqueNote(const std::string& name, const SchemaSet& schemas) {
  std::vector<std::string> known;
  for (const auto& [technique, schema] : schemas.techniques) known.push_back(technique);
  std::string expected;
  if (known.empty()) {
    std::string dirs;
    for (const auto& d : schemas.plugin_dirs) dirs += (dirs.empty() ? "" : ", ") + Quote(d);
    expected = dirs.empty() ? "no techniques are installed; build the plugins or add their directory to RUNX_PLUGIN_PATH"
                            : "no techniques are installed in " + dirs;
  } else {
    expected = known.size() == 1 ? "expected " + Quote(known.front()) : "expected one of " + QuotedList(known);
  }
  const std::string guess = DidYouMean(name, known);
  if (!guess.empty()) expected += fmt::format("; did you mean {}?", Quote(guess));
  return expected;
}

std::vector<Issue> CheckTechniques(const json& doc, const SchemaSet& schemas) {
  std::vector<Issue> issues;
  if (!doc.is_object() || !doc.contains("optimizations") || !doc["optimizations"].is_object()) return issues;
  for (const auto& [name, params] : doc["optimizations"].items()) {
    const std::string pointer = PointerAppend("/optimizations", name);
    const auto it = schemas.techniques.find(name);
    if (it == schemas.techniques.end()) {
      issues.push_back({pointer, true, fmt::format("unknown technique {}", Quote(name)), {TechniqueNote(name, schemas)}});
      continue;
    }
    if (!params.is_object()) continue;  // the experiment schema says what is wrong
    for (auto& issue : CheckAgainstSchema(it->second, doc, pointer, params)) issues.push_back(std::move(issue));
  }
  return issues;
}

std::vector<Issue> CheckSemantics(const json& doc, const SourceMap& origins, const std::vector<Override>& overrides) {
  std::vector<Issue> issues;
  if (!doc.is_object()) return issues;
  if (const auto train = doc.find("train");
      train != doc.end() && train->is_object() && train->contains("steps") && train->contains("epochs")) {
    Place steps = PlaceOf("/train/steps", origins, overrides);
    Place epochs = PlaceOf("/train/epochs", origins, overrides);
    const bool epochs_last = epochs.order > steps.order;
    const std::string later = epochs_last ? "epochs" : "steps", earlier = epochs_last ? "steps" : "epochs";
    issues.push_back({"/train/" + later, true,
                      fmt::format("'train.{}' cannot be used together with 'train.{}'", later, earlier),
                      {fmt::format("'train.{}' is set {}; measure either a number of steps or a number of epochs",
                                   earlier, (epochs_last ? steps : epochs).text)}});
  }
  if (const auto data = doc.find("data"); data != doc.end() && data->is_object())
    for (auto& issue : CheckData(*data)) issues.push_back(std::move(issue));
  if (const auto model = doc.find("model"); model != doc.end() && model->is_object())
    for (auto& issue : CheckModelKeys(*model)) issues.push_back(std::move(issue));
  for (auto& issue : CheckModelData(doc)) issues.push_back(std::move(issue));
  for (auto& issue : CheckInputPaths(doc)) issues.push_back(std::move(issue));
  // Each task reads its own section; the other one would be silently ignored.
  const json task = doc.value("task", json("train"));
  // An AOTInductor package is a compiled forward graph: nothing in it can be trained.
  if (const auto model = doc.find("model"); model != doc.end() && model->is_object() &&
                                            model->value("name", json()) == "aoti" && task != "infer") {
    issues.push_back({"/model/name", false,
                      "model 'aoti' runs an AOTInductor package, which is inference-only",
                      {"add 'task: infer' to measure it; AOTInductor compiles forward graphs only, so to train a "
                       "model from a file export it with torch.jit and use model: {name: torchscript}"}});
  }
  if (task.is_string()) {
    const bool infer = task == "infer";
    const char* unused = infer ? "train" : "infer";
    if (doc.contains(unused)) {
      const Place set = PlaceOf("/task", origins, overrides);
      issues.push_back({fmt::format("/{}", unused), true,
                        fmt::format("'{}' is not used by task '{}'", unused, task.get<std::string>()),
                        {infer ? fmt::format("task 'infer' is set {}; it measures forward passes: set their number in "
                                             "'infer', e.g. infer: {{warmup_steps: 20, steps: 200}}", set.text)
                               : "'infer' configures task 'infer'; add 'task: infer' to measure inference, or remove "
                                 "'infer' to train"}});
    }
  }
  return issues;
}

}  // namespace runx::spec
