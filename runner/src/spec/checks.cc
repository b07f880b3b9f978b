#include "spec/checks.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "base/files.h"
#include "spec/catalogue.h"
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

/// The keys `section`'s entry requires and the keys of other entries it refuses.
std::vector<Issue> CheckSectionKeys(const json& doc, const CatalogueSection& catalogue) {
  std::vector<Issue> issues;
  const auto it = doc.find(catalogue.name);
  if (it == doc.end() || !it->is_object()) return issues;
  const json& section = *it;
  const json selected = section.value(catalogue.selector, json());
  if (!selected.is_string()) return issues;  // the schema says what is wrong
  const std::string name = selected.get<std::string>();
  const std::string at = "/" + catalogue.name;
  const CatalogueEntry* entry = catalogue.Find(name);
  if (entry && !catalogue.schema_requires) {
    for (const CatalogueKey& key : entry->keys) {
      if (!key.required || section.contains(key.name)) continue;
      issues.push_back({at,
                        true,
                        fmt::format("missing required key '{}' in '{}'", key.name, catalogue.name),
                        {entry->required_note}});
    }
  }
  for (const std::string& key : catalogue.EntryKeys()) {
    if (!section.contains(key) || (entry && entry->Key(key))) continue;
    const CatalogueEntry* refuser = nullptr;
    for (const CatalogueEntry& reader : catalogue.entries) {
      const CatalogueKey* k = reader.Key(key);
      if (k && k->refused_elsewhere) {
        refuser = &reader;
        break;
      }
    }
    if (!refuser) continue;  // left out of the trial's identity, not refused
    const std::string note =
        refuser->refused_note.empty()
            ? fmt::format("'{}.{}' is for {}", catalogue.name, key, catalogue.called(OrList(catalogue.ReadersOf(key))))
            : refuser->refused_note;
    issues.push_back({PointerAppend(at, key),
                      true,
                      fmt::format("'{}.{}' is not used by {}", catalogue.name, key, catalogue.called(name)),
                      {note}});
  }
  return issues;
}

/// A model that reads other samples than the data gives: gpt reads token ids (text data), a
/// TorchScript file either kind, every other model float samples.
std::vector<Issue> CheckSamples(const json& doc) {
  std::vector<Issue> issues;
  const json model = doc.value("model", json()), data = doc.value("data", json());
  if (!model.is_object() || !data.is_object()) return issues;
  const json name = model.value("name", json()), source = data.value("source", json());
  if (!name.is_string() || !source.is_string()) return issues;  // the schema says what is wrong
  const CatalogueEntry* reader = ModelCatalogue().Find(name.get<std::string>());
  const CatalogueEntry* giver = DataCatalogue().Find(source.get<std::string>());
  const Samples reads = reader ? reader->samples : Samples::kFloats;
  const Samples gives = giver ? giver->samples : Samples::kFloats;
  if (reads == Samples::kTokens && gives == Samples::kFloats)
    issues.push_back({"/model/name",
                      false,
                      fmt::format("model {} reads token ids, and {} data gives float samples",
                                  Quote(name.get<std::string>()), source.get<std::string>()),
                      {"train gpt on text data, e.g. data: {source: text, path: /usr/share/games/fortunes, "
                       "seq_len: 128, batch_size: 32}"}});
  if (reads == Samples::kFloats && gives == Samples::kTokens)
    issues.push_back(
        {"/model/name",
         false,
         fmt::format("model {} reads float samples, and {} data gives token ids", Quote(name.get<std::string>()),
                     source.get<std::string>()),
         {"text data trains a language model: use model 'gpt', or a TorchScript language model (model: {name: "
          "torchscript, path: FILE}) mapping token ids [batch, seq_len] to logits [batch, seq_len, vocabulary]"}});
  return issues;
}

/// The check of the entry each section names.
std::vector<Issue> CheckEntries(const json& doc) {
  std::vector<Issue> issues;
  for (const CatalogueSection* catalogue : {&DataCatalogue(), &ModelCatalogue()}) {
    const CatalogueEntry* entry = catalogue->Selected(doc.value(catalogue->name, json()));
    if (!entry || !entry->check) continue;
    for (auto& issue : entry->check(doc)) issues.push_back(std::move(issue));
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
    issues.push_back({pointer,
                      false,
                      fmt::format("'{}' is {}, not a regular file", key, kind),
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
  for (const CatalogueSection* catalogue : {&ModelCatalogue(), &DataCatalogue()})
    for (const std::string& key : catalogue->InputKeys()) {
      const std::string pointer = "/" + catalogue->name + "/" + key;
      check(pointer, at(pointer.c_str()));
    }
  check("/optimizations/compiled_step/package", at("/optimizations/compiled_step/package"));
  return issues;
}

}  // namespace

std::vector<Issue> CheckSyntheticData(const json& doc) {
  const json& data = doc.at("data");
  if (data.contains("produce_ms") && data.value("placement", json("device")) != "host")
    return {{"/data/produce_ms",
             true,
             "'data.produce_ms' needs 'data.placement: host'",
             {"produce_ms simulates the host work of making a batch; device-resident synthetic data has none"}}};
  return {};
}

std::vector<Issue> CheckMemmapData(const json& doc) {
  const json& data = doc.at("data");
  if (data.contains("eval_path") == data.contains("eval_labels")) return {};
  const bool has_path = data.contains("eval_path");
  return {{has_path ? "/data/eval_path" : "/data/eval_labels",
           true,
           fmt::format("'data.{}' needs 'data.{}'", has_path ? "eval_path" : "eval_labels",
                       has_path ? "eval_labels" : "eval_path"),
           {"the held-out split is two files: its inputs (eval_path) and their labels (eval_labels)"}}};
}

std::vector<Issue> CheckAoti(const json& doc) {
  // An AOTInductor package is a compiled forward graph: nothing in it can be trained.
  if (doc.value("task", json("train")) == "infer") return {};
  return {{"/model/name",
           false,
           "model 'aoti' runs an AOTInductor package, which is inference-only",
           {"add 'task: infer' to measure it; AOTInductor compiles forward graphs only, so to train a "
            "model from a file export it with torch.jit and use model: {name: torchscript}"}}};
}

std::string TechniqueNote(const std::string& name, const SchemaSet& schemas) {
  std::vector<std::string> known;
  for (const auto& [technique, schema] : schemas.techniques) known.push_back(technique);
  std::string expected;
  if (known.empty()) {
    std::string dirs;
    for (const auto& d : schemas.plugin_dirs) dirs += (dirs.empty() ? "" : ", ") + Quote(d);
    expected = dirs.empty()
                   ? "no techniques are installed; build the plugins or add their directory to RUNX_PLUGIN_PATH"
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
      issues.push_back(
          {pointer, true, fmt::format("unknown technique {}", Quote(name)), {TechniqueNote(name, schemas)}});
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
    issues.push_back({"/train/" + later,
                      true,
                      fmt::format("'train.{}' cannot be used together with 'train.{}'", later, earlier),
                      {fmt::format("'train.{}' is set {}; measure either a number of steps or a number of epochs",
                                   earlier, (epochs_last ? steps : epochs).text)}});
  }
  for (const CatalogueSection* catalogue : {&DataCatalogue(), &ModelCatalogue()})
    for (auto& issue : CheckSectionKeys(doc, *catalogue)) issues.push_back(std::move(issue));
  for (auto& issue : CheckSamples(doc)) issues.push_back(std::move(issue));
  for (auto& issue : CheckEntries(doc)) issues.push_back(std::move(issue));
  for (auto& issue : CheckInputPaths(doc)) issues.push_back(std::move(issue));
  // Each task reads its own section; the other one would be silently ignored.
  const json task = doc.value("task", json("train"));
  if (task.is_string()) {
    const bool infer = task == "infer";
    const char* unused = infer ? "train" : "infer";
    if (doc.contains(unused)) {
      const Place set = PlaceOf("/task", origins, overrides);
      issues.push_back({fmt::format("/{}", unused),
                        true,
                        fmt::format("'{}' is not used by task '{}'", unused, task.get<std::string>()),
                        {infer ? fmt::format("task 'infer' is set {}; it measures forward passes: set their number in "
                                             "'infer', e.g. infer: {{warmup_steps: 20, steps: 200}}",
                                             set.text)
                               : "'infer' configures task 'infer'; add 'task: infer' to measure inference, or remove "
                                 "'infer' to train"}});
    }
  }
  return issues;
}

}  // namespace runx::spec
