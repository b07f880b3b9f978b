#pragma once
// The models and data sources runx knows, each declared once (catalogue.cc): the keys of its
// section it reads, which of them are input files, which it needs, what samples it reads or gives,
// and its own checks. Derived from it: which keys a trial's identity keeps and which files it
// hashes (identity.cc), the missing-key, foreign-key, sample-kind and per-entry checks (checks.cc),
// and, by a test (catalogue_test.cc), the experiment schema's names and keys. LLVM's
// PassRegistry.def is the model. No LibTorch here.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/issue.h"

namespace runx::spec {

/// The samples a model reads or a data source gives.
enum class Samples {
  kFloats,  ///< float tensors of the data's sample shape, integer class labels
  kTokens,  ///< token ids [seq_len], targets shifted by one (text data, gpt)
  kAny,     ///< either (a TorchScript file)
};

/// How an input file counts in the config identity (InputFiles).
enum class InputKind {
  kNone,       ///< not a file
  kFile,       ///< a file by its content; a folder as every regular file in it, by name and content
  kTextFiles,  ///< the text files ListTextFiles takes from a file or a folder (spec/text_data.h)
};

/// One key of a section that a model or data source reads.
struct CatalogueKey {
  std::string name;
  bool required = false;  ///< absent: an error (the schema's or CheckSemantics': see schema_requires)
  InputKind input = InputKind::kNone;
  /// Set with a model or source that does not read it: an error. Otherwise such a key is only left
  /// out of the trial's identity (a schema default, or a key a sweep sets for some variants).
  bool refused_elsewhere = false;
  /// Set by runx, not by users (a python model's artifact, made by `runx compile`): not in the schema.
  bool set_by_runx = false;
};

/// One model or data source.
struct CatalogueEntry {
  std::string name;  ///< the value of the section's selector: "resnet50", "memmap"
  /// The keys it reads beyond its section's common ones (a common key is listed only to require
  /// it: synthetic data's num_classes).
  std::vector<CatalogueKey> keys;
  Samples samples = Samples::kFloats;
  std::string required_note;  ///< the note of a missing required key (CheckSemantics)
  /// The note when another entry's section sets one of its refused keys; empty: "'data.<key>' is
  /// for <the entries that read it> data".
  std::string refused_note;
  /// Its rules that the schema cannot express, on the whole document (e.g. gpt's d_model against
  /// n_head, text data's files); run by CheckSemantics when the section names this entry.
  std::vector<Issue> (*check)(const json& doc) = nullptr;

  const CatalogueKey* Key(const std::string& key) const;  ///< nullptr when it does not read `key`
};

/// A section of the experiment (model, data) whose keys depend on the entry it names.
struct CatalogueSection {
  std::string name;                 ///< "model", "data"
  std::string selector;             ///< the key that names the entry: "name", "source"
  std::vector<std::string> common;  ///< keys every entry reads (never pruned nor refused)
  /// Required keys are checked by the experiment schema (its if/then, with the schema's message);
  /// otherwise CheckSemantics checks them with the entry's required_note.
  bool schema_requires = false;
  /// How a message names an entry: "model 'cnn'", "synthetic data".
  std::string (*called)(const std::string& entry) = nullptr;
  std::vector<CatalogueEntry> entries;

  const CatalogueEntry* Find(const std::string& entry) const;  ///< nullptr when unknown
  /// The entry `section` (the section's value in a config) names; nullptr when it names none or an
  /// unknown one.
  const CatalogueEntry* Selected(const json& section) const;
  std::vector<std::string> Names() const;  ///< the entries, in catalogue order
  /// The keys some entries read and others not (the entries' keys that are not common), in order
  /// of first mention.
  std::vector<std::string> EntryKeys() const;
  /// The keys that are input files of some entry, in order of first mention.
  std::vector<std::string> InputKeys() const;
  /// The entries that read `key`, in catalogue order.
  std::vector<std::string> ReadersOf(const std::string& key) const;
};

/// The built-in models, TorchScript files, AOTInductor packages and python models.
const CatalogueSection& ModelCatalogue();
/// The data sources.
const CatalogueSection& DataCatalogue();

}  // namespace runx::spec
