#include "spec/catalogue.h"

#include <algorithm>
#include <utility>

#include "spec/checks.h"

namespace runx::spec {
namespace {

/// A key, read as it is declared: Key("labels").Required().File().RefusedElsewhere().
class Key {
 public:
  explicit Key(const char* name) { key_.name = name; }
  Key Required() const { return With(&CatalogueKey::required, true); }
  Key File() const { return With(&CatalogueKey::input, InputKind::kFile); }
  Key TextFiles() const { return With(&CatalogueKey::input, InputKind::kTextFiles); }
  Key RefusedElsewhere() const { return With(&CatalogueKey::refused_elsewhere, true); }
  Key SetByRunx() const { return With(&CatalogueKey::set_by_runx, true); }
  operator CatalogueKey() const { return key_; }  // NOLINT: declared where a CatalogueKey is stored

 private:
  template <typename T>
  Key With(T CatalogueKey::*field, T value) const {
    Key copy = *this;
    copy.key_.*field = value;
    return copy;
  }
  CatalogueKey key_;
};

/// An entry, read as it is declared: Entry("gpt", {keys}).Reads(Samples::kTokens).Check(CheckGpt).
class Entry {
 public:
  Entry(const char* name, std::vector<CatalogueKey> keys) {
    entry_.name = name;
    entry_.keys = std::move(keys);
  }
  Entry Reads(Samples samples) const { return With(&CatalogueEntry::samples, samples); }
  Entry Gives(Samples samples) const { return With(&CatalogueEntry::samples, samples); }
  Entry RequiredNote(const char* note) const { return With(&CatalogueEntry::required_note, std::string(note)); }
  Entry RefusedNote(const char* note) const { return With(&CatalogueEntry::refused_note, std::string(note)); }
  Entry Check(std::vector<Issue> (*check)(const json& doc)) const { return With(&CatalogueEntry::check, check); }
  operator CatalogueEntry() const { return entry_; }  // NOLINT: declared where a CatalogueEntry is stored

 private:
  template <typename T>
  Entry With(T CatalogueEntry::*field, T value) const {
    Entry copy = *this;
    copy.entry_.*field = std::move(value);
    return copy;
  }
  CatalogueEntry entry_;
};

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
      Entry("mlp", {Key("hidden"), Key("dropout")}),
      Entry("cnn", {Key("channels"), Key("dropout")}),
      Entry("resnet18", {}),
      Entry("resnet50", {}),
      Entry("gpt", {Key("dropout"), Key("n_layer"), Key("n_head"), Key("d_model"), Key("block_size")})
          .Reads(Samples::kTokens)
          .Check(CheckGpt),
      Entry("torchscript", {Key("path").Required().File(), Key("jit_optimize")}).Reads(Samples::kAny),
      Entry("aoti", {Key("path").Required().File(), Key("model_name")}).Check(CheckAoti),
      Entry("python", {Key("path").Required().File(), Key("jit_optimize"), Key("builder").RefusedElsewhere(),
                       Key("kwargs").RefusedElsewhere(), Key("artifact").SetByRunx()})
          .RefusedNote(kPythonNote),
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
      Entry("synthetic", {Key("shape").Required(), Key("num_classes").Required(), Key("placement").RefusedElsewhere(),
                          Key("produce_ms").RefusedElsewhere()})
          .RequiredNote("synthetic data needs 'shape' and 'num_classes', e.g. shape: [3, 224, 224], num_classes: 1000")
          .Check(CheckSyntheticData),
      Entry("fashion-mnist", {Key("path").File(), Key("placement").RefusedElsewhere()}),
      Entry("memmap", {Key("path").Required().File(), Key("labels").Required().File().RefusedElsewhere(),
                       Key("eval_path").File().RefusedElsewhere(), Key("eval_labels").File().RefusedElsewhere(),
                       Key("dtype").RefusedElsewhere(), Key("label_dtype").RefusedElsewhere(),
                       Key("scale").RefusedElsewhere(), Key("normalize").RefusedElsewhere(), Key("shape")})
          .RequiredNote("memmap data needs 'path' (the inputs file) and 'labels' (the labels file), e.g. path: "
                        "train_inputs.npy, labels: train_labels.npy; 'runx data pack' writes them")
          .Check(CheckMemmapData),
      Entry("text", {Key("path").Required().TextFiles(), Key("seq_len").Required().RefusedElsewhere(),
                     Key("tokenizer").RefusedElsewhere(), Key("val_fraction").RefusedElsewhere()})
          .Gives(Samples::kTokens)
          .RequiredNote(
              "text data needs 'path' (a text file, plain or gzip, or a folder of them) and 'seq_len' (input "
              "tokens per sample), e.g. path: /usr/share/games/fortunes ('apt-get install fortunes'), seq_len: 128")
          .Check(CheckTextData),
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
