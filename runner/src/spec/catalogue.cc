#include "spec/catalogue.h"

#include <algorithm>

#include "spec/checks.h"

namespace runx::spec {
namespace {

using K = CatalogueKey;
constexpr InputKind kFile = InputKind::kFile;

const char* const kPythonNote =
    "'builder' and 'kwargs' name the function of a python model and its keyword arguments, e.g. "
    "model: {name: python, path: model.py, builder: build, kwargs: {num_classes: 10}}";

CatalogueSection MakeModels() {
  CatalogueSection s;
  s.name = "model";
  s.selector = "name";
  s.common = {"name", "num_classes"};
  s.schema_requires = true;  // the schema's if/then requires 'path' (catalogue_test.cc holds it to this)
  s.called = [](const std::string& entry) { return "model " + Quote(entry); };
  s.entries = {
      {"mlp", {K{"hidden"}, K{"dropout"}}},
      {"cnn", {K{"channels"}, K{"dropout"}}},
      {"resnet18", {}},
      {"resnet50", {}},
      {"gpt",
       {K{"dropout"}, K{"n_layer"}, K{"n_head"}, K{"d_model"}, K{"block_size"}},
       Samples::kTokens,
       "",
       "",
       CheckGpt},
      {"torchscript", {K{"path", true, kFile}, K{"jit_optimize"}}, Samples::kAny},
      {"aoti", {K{"path", true, kFile}, K{"model_name"}}, Samples::kFloats, "", "", CheckAoti},
      {"python",
       {K{"path", true, kFile}, K{"jit_optimize"}, K{"builder", false, InputKind::kNone, true},
        K{"kwargs", false, InputKind::kNone, true}, K{"artifact", false, InputKind::kNone, false, true}},
       Samples::kFloats,
       "",
       kPythonNote},
  };
  return s;
}

CatalogueSection MakeDataSources() {
  CatalogueSection s;
  s.name = "data";
  s.selector = "source";
  s.common = {"source", "batch_size", "num_classes", "train_limit", "shuffle"};
  s.called = [](const std::string& entry) { return entry + " data"; };
  // 'path' (its schema default is fashion-mnist's folder) and 'shape' are left out of the identity
  // of a source that does not read them, but not refused.
  s.entries = {
      {"synthetic",
       {K{"shape", true}, K{"num_classes", true}, K{"placement", false, InputKind::kNone, true},
        K{"produce_ms", false, InputKind::kNone, true}},
       Samples::kFloats,
       "synthetic data needs 'shape' and 'num_classes', e.g. shape: [3, 224, 224], num_classes: 1000",
       "",
       CheckSyntheticData},
      {"fashion-mnist", {K{"path", false, kFile}, K{"placement", false, InputKind::kNone, true}}},
      {"memmap",
       {K{"path", true, kFile}, K{"labels", true, kFile, true}, K{"eval_path", false, kFile, true},
        K{"eval_labels", false, kFile, true}, K{"dtype", false, InputKind::kNone, true},
        K{"label_dtype", false, InputKind::kNone, true}, K{"scale", false, InputKind::kNone, true},
        K{"normalize", false, InputKind::kNone, true}, K{"shape"}},
       Samples::kFloats,
       "memmap data needs 'path' (the inputs file) and 'labels' (the labels file), e.g. path: train_inputs.npy, "
       "labels: train_labels.npy; 'runx data pack' writes them",
       "",
       CheckMemmapData},
      {"text",
       {K{"path", true, InputKind::kTextFiles}, K{"seq_len", true, InputKind::kNone, true},
        K{"tokenizer", false, InputKind::kNone, true}, K{"val_fraction", false, InputKind::kNone, true}},
       Samples::kTokens,
       "text data needs 'path' (a text file, plain or gzip, or a folder of them) and 'seq_len' (input tokens per "
       "sample), e.g. path: /usr/share/games/fortunes ('apt-get install fortunes'), seq_len: 128",
       "",
       CheckTextData},
  };
  return s;
}

}  // namespace

const CatalogueKey* CatalogueEntry::Key(const std::string& key) const {
  const auto it = std::find_if(keys.begin(), keys.end(), [&](const CatalogueKey& k) { return k.name == key; });
  return it == keys.end() ? nullptr : &*it;
}

const CatalogueEntry* CatalogueSection::Find(const std::string& entry) const {
  const auto it =
      std::find_if(entries.begin(), entries.end(), [&](const CatalogueEntry& e) { return e.name == entry; });
  return it == entries.end() ? nullptr : &*it;
}

const CatalogueEntry* CatalogueSection::Selected(const json& section) const {
  if (!section.is_object() || !section.contains(selector) || !section[selector].is_string()) return nullptr;
  return Find(section[selector].get<std::string>());
}

std::vector<std::string> CatalogueSection::Names() const {
  std::vector<std::string> names;
  for (const auto& e : entries) names.push_back(e.name);
  return names;
}

std::vector<std::string> CatalogueSection::EntryKeys() const {
  std::vector<std::string> keys;
  for (const auto& e : entries)
    for (const auto& k : e.keys)
      if (std::find(common.begin(), common.end(), k.name) == common.end() &&
          std::find(keys.begin(), keys.end(), k.name) == keys.end())
        keys.push_back(k.name);
  return keys;
}

std::vector<std::string> CatalogueSection::InputKeys() const {
  std::vector<std::string> keys;
  for (const auto& e : entries)
    for (const auto& k : e.keys)
      if (k.input != InputKind::kNone && std::find(keys.begin(), keys.end(), k.name) == keys.end())
        keys.push_back(k.name);
  return keys;
}

std::vector<std::string> CatalogueSection::ReadersOf(const std::string& key) const {
  std::vector<std::string> readers;
  for (const auto& e : entries)
    if (e.Key(key)) readers.push_back(e.name);
  return readers;
}

const CatalogueSection& ModelCatalogue() {
  static const CatalogueSection models = MakeModels();
  return models;
}

const CatalogueSection& DataCatalogue() {
  static const CatalogueSection sources = MakeDataSources();
  return sources;
}

}  // namespace runx::spec
