// The catalogue of models and data sources (spec/catalogue.h): the experiment schema agrees with
// it, and the identity and the checks derived from it say what the catalogue says.
#include "spec/catalogue.h"

#include <gtest/gtest.h>

#include <set>

#include "spec/identity.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;

const json& SchemaOf(const CatalogueSection& catalogue) {
  return Schemas().experiment.at("properties").at(catalogue.name);
}

std::vector<const CatalogueSection*> Sections() { return {&ModelCatalogue(), &DataCatalogue()}; }

TEST(Catalogue, SchemaNamesTheCataloguesModelsAndSources) {
  for (const CatalogueSection* catalogue : Sections()) {
    const json names = SchemaOf(*catalogue).at("properties").at(catalogue->selector).at("enum");
    EXPECT_EQ(names.get<std::vector<std::string>>(), catalogue->Names()) << catalogue->name;
  }
}

TEST(Catalogue, SchemaHoldsExactlyTheCataloguesKeys) {
  for (const CatalogueSection* catalogue : Sections()) {
    std::set<std::string> in_schema, in_catalogue{catalogue->selector};
    for (const auto& [key, value] : SchemaOf(*catalogue).at("properties").items()) in_schema.insert(key);
    in_catalogue.insert(catalogue->common.begin(), catalogue->common.end());
    for (const CatalogueEntry& entry : catalogue->entries)
      for (const CatalogueKey& key : entry.keys)
        if (!key.set_by_runx) in_catalogue.insert(key.name);
    EXPECT_EQ(in_schema, in_catalogue) << catalogue->name;
    for (const auto& key : SchemaOf(*catalogue).at("required"))
      EXPECT_TRUE(in_catalogue.count(key.get<std::string>())) << key;
  }
}

// The schema's if/then requires the model keys the catalogue requires (with the schema's own
// message); a data source's required keys are CheckSemantics', with the entry's note.
TEST(Catalogue, SchemaRequiresWhatTheCatalogueRequires) {
  for (const CatalogueSection* catalogue : Sections()) {
    const json& schema = SchemaOf(*catalogue);
    std::vector<std::string> requiring;
    std::set<std::string> required;
    for (const CatalogueEntry& entry : catalogue->entries) {
      std::set<std::string> own;
      for (const CatalogueKey& key : entry.keys)
        if (key.required) own.insert(key.name);
      if (own.empty()) continue;
      requiring.push_back(entry.name);
      if (!catalogue->schema_requires) {
        EXPECT_FALSE(entry.required_note.empty()) << entry.name;
        continue;
      }
      if (!required.empty()) EXPECT_EQ(own, required) << entry.name << ": the schema's one if/then requires one set";
      required = own;
    }
    if (!catalogue->schema_requires) {
      EXPECT_FALSE(schema.contains("if")) << catalogue->name;
      continue;
    }
    EXPECT_EQ(schema.at("if").at("properties").at(catalogue->selector).at("enum").get<std::vector<std::string>>(),
              requiring);
    const auto then = schema.at("then").at("required").get<std::vector<std::string>>();
    EXPECT_EQ(std::set<std::string>(then.begin(), then.end()), required);
  }
}

TEST(Catalogue, EveryReaderOfAKeyRefusesItElsewhereAlike) {
  for (const CatalogueSection* catalogue : Sections()) {
    for (const std::string& key : catalogue->EntryKeys()) {
      std::set<bool> refused;
      for (const std::string& reader : catalogue->ReadersOf(key))
        refused.insert(catalogue->Find(reader)->Key(key)->refused_elsewhere);
      EXPECT_EQ(refused.size(), 1u) << catalogue->name << "." << key;
    }
  }
}

/// Every key of every entry of `catalogue` set (a string for input files), with `entry` named.
json EveryKey(const CatalogueSection& catalogue, const std::string& entry) {
  json section{{catalogue.selector, entry}};
  for (const std::string& key : catalogue.common)
    if (key != catalogue.selector) section[key] = 2;
  for (const std::string& key : catalogue.EntryKeys()) section[key] = 1;
  for (const std::string& key : catalogue.InputKeys()) section[key] = "/no/such/file";
  return section;
}

TEST(Catalogue, IdentityKeepsTheKeysAndHashesTheFilesOfTheEntryNamed) {
  const json base = json::parse(R"({"device": "cpu", "task": "train",
    "model": {"name": "mlp"}, "data": {"source": "synthetic", "batch_size": 2}})");
  for (const CatalogueSection* catalogue : Sections()) {
    for (const CatalogueEntry& entry : catalogue->entries) {
      json config = base;
      config[catalogue->name] = EveryKey(*catalogue, entry.name);
      std::set<std::string> kept, expected{catalogue->selector}, hashed, inputs;
      const json used = UsedConfig(config), inputs_of = InputFiles(config);
      for (const auto& [key, value] : used.at(catalogue->name).items()) kept.insert(key);
      expected.insert(catalogue->common.begin(), catalogue->common.end());
      for (const CatalogueKey& key : entry.keys) {
        expected.insert(key.name);
        if (key.input != InputKind::kNone) inputs.insert(catalogue->name + "." + key.name);
      }
      EXPECT_EQ(kept, expected) << entry.name;
      for (const auto& [key, value] : inputs_of.items())
        if (key.rfind(catalogue->name + ".", 0) == 0) hashed.insert(key);
      EXPECT_EQ(hashed, inputs) << entry.name;
    }
  }
}

const std::string kHead = "name: x\ndevice: cpu\n";

TEST(Catalogue, KeysOfAPythonModelAreRefusedWithAnotherModel) {
  const std::string note =
      "note: 'builder' and 'kwargs' name the function of a python model and its keyword arguments, e.g. model: "
      "{name: python, path: model.py, builder: build, kwargs: {num_classes: 10}}\n";
  EXPECT_EQ(RenderText(kHead + "model: {name: cnn, builder: build, kwargs: {a: 1}}\n"
                               "data: {source: synthetic, shape: [3, 8, 8], num_classes: 2, batch_size: 2}\n"),
            "x.yaml:3:20: error: 'model.builder' is not used by model 'cnn'\n"
            "    3 | model: {name: cnn, builder: build, kwargs: {a: 1}}\n"
            "      |                    ^\n" +
                note +
                "x.yaml:3:36: error: 'model.kwargs' is not used by model 'cnn'\n"
                "    3 | model: {name: cnn, builder: build, kwargs: {a: 1}}\n"
                "      |                                    ^\n" +
                note);
  // A model or source the catalogue does not know reads none of its entries' keys.
  EXPECT_EQ(RenderText(kHead + "model: {name: foo, builder: b}\n"
                               "data: {source: foo, labels: l.npy, path: p, shape: [2], batch_size: 2}\n"),
            "x.yaml:3:15: error: unknown model 'foo'\n"
            "    3 | model: {name: foo, builder: b}\n"
            "      |               ^\n"
            "note: expected one of 'mlp', 'cnn', 'resnet18', 'resnet50', 'gpt', 'torchscript', 'aoti', 'python'\n"
            "x.yaml:3:20: error: 'model.builder' is not used by model 'foo'\n"
            "    3 | model: {name: foo, builder: b}\n"
            "      |                    ^\n" +
                note +
                "x.yaml:4:16: error: unknown data source 'foo'\n"
                "    4 | data: {source: foo, labels: l.npy, path: p, shape: [2], batch_size: 2}\n"
                "      |                ^\n"
                "note: expected one of 'synthetic', 'fashion-mnist', 'memmap', 'text'\n"
                "x.yaml:4:21: error: 'data.labels' is not used by foo data\n"
                "    4 | data: {source: foo, labels: l.npy, path: p, shape: [2], batch_size: 2}\n"
                "      |                     ^\n"
                "note: 'data.labels' is for memmap data\n");
}

// Two errors at one place keep their order: the samples a model reads, then the model's own check.
TEST(Catalogue, SampleKindsBeforeTheModelsOwnCheck) {
  EXPECT_EQ(RenderText(kHead + "model: {name: aoti, path: m.pt2}\ndata:\n  source: text\n  path: " + kData +
                       "/identity/text.txt\n  seq_len: 8\n  batch_size: 2\n"),
            "x.yaml:3:15: error: model 'aoti' reads float samples, and text data gives token ids\n"
            "    3 | model: {name: aoti, path: m.pt2}\n"
            "      |               ^\n"
            "note: text data trains a language model: use model 'gpt', or a TorchScript language model (model: "
            "{name: torchscript, path: FILE}) mapping token ids [batch, seq_len] to logits [batch, seq_len, "
            "vocabulary]\n"
            "x.yaml:3:15: error: model 'aoti' runs an AOTInductor package, which is inference-only\n"
            "    3 | model: {name: aoti, path: m.pt2}\n"
            "      |               ^\n"
            "note: add 'task: infer' to measure it; AOTInductor compiles forward graphs only, so to train a model "
            "from a file export it with torch.jit and use model: {name: torchscript}\n");
}

}  // namespace
}  // namespace runx::spec::test
