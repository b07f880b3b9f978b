// Load: defaults, normalised techniques, hashes, schema discovery.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "spec/schema_check.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Load, FillsDefaultsAndNormalisesTechniques) {
  const Experiment e = Load(kData + "/good.yaml", {}, Schemas());
  EXPECT_EQ(e.path, kData + "/good.yaml");
  EXPECT_EQ(e.text, ReadAll(kData + "/good.yaml"));
  const json& c = e.config;
  EXPECT_EQ(c["device"], json("cpu"));      // given
  EXPECT_EQ(c["precision"], json("fp32"));  // defaults
  EXPECT_EQ(c["task"], json("train"));
  EXPECT_EQ(c["results"], json("results/runx.db"));
  EXPECT_EQ(c["model"]["dropout"], json(0));
  EXPECT_EQ(c["model"]["channels"], json::parse("[32, 64]"));
  EXPECT_EQ(c["data"]["shuffle"], json(true));
  EXPECT_EQ(c["train"]["eval"], json(true));
  EXPECT_EQ(c["train"]["warmup_steps"], json(2));
  EXPECT_EQ(c["train"]["optimizer"], json::parse(R"({"name": "sgd", "lr": 0.1, "momentum": 0.9})"));
  // [channels_last, amp] -> a map, each technique with its own schema's defaults.
  EXPECT_EQ(c["optimizations"]["channels_last"], json::parse(R"({"inputs": true})"));
  EXPECT_EQ(c["optimizations"]["amp"]["loss_scale"], json("auto"));
  EXPECT_EQ(c["optimizations"]["amp"]["growth_interval"], json(2000));
  EXPECT_FALSE(c["optimizations"]["amp"].contains("dtype"));  // no default: the plugin decides
}

TEST(Load, DefaultsOfAbsentMappings) {
  const json c =
      LoadText("x.yaml", "name: x\nmodel: {name: mlp}\ndata: {source: fashion-mnist, batch_size: 1}\n", {}, Schemas())
          .config;
  EXPECT_EQ(c["train"], json::parse(R"({"optimizer": {"name": "sgd"}, "warmup_steps": 5, "eval": true})"));
  EXPECT_EQ(c["optimizations"], json::object());
  EXPECT_EQ(c["device"], json("auto"));
  EXPECT_EQ(c["seed"], json(0));
  EXPECT_EQ(c["data"]["path"], json("/usr/share/datasets/fashion-mnist"));
}

TEST(Load, Hashes) {
  const Experiment a = Load(kData + "/good.yaml", {}, Schemas());
  EXPECT_EQ(a.text_sha256, Sha256Hex(a.text));
  EXPECT_EQ(a.config_hash, Sha256Hex(a.config.dump()));
  EXPECT_EQ(a.config_hash.size(), 64u);
  // The same experiment written in another order and form hashes the same...
  const Experiment b = Load(kData + "/reordered.yaml", {}, Schemas());
  EXPECT_NE(a.text_sha256, b.text_sha256);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.config_hash, b.config_hash);
  // ... and an override changes it.
  EXPECT_NE(a.config_hash, Load(kData + "/good.yaml", Sets({"seed=2"}), Schemas()).config_hash);
  // A default written out is the same experiment.
  EXPECT_EQ(a.config_hash, Load(kData + "/good.yaml", Sets({"precision=fp32"}), Schemas()).config_hash);
}

TEST(Load, NullTechniqueParametersAreEmpty) {
  const json c = LoadText("x.yaml",
                          "name: x\nmodel: {name: mlp}\ndata: {source: fashion-mnist, batch_size: 1}\n"
                          "optimizations:\n  amp:\n  channels_last: {}\n",
                          {}, Schemas())
                     .config;
  EXPECT_EQ(c["optimizations"]["amp"]["loss_scale"], json("auto"));
  EXPECT_EQ(c["optimizations"]["channels_last"]["inputs"], json(true));
}

TEST(Load, ValidateReturnsNothingForAGoodFile) { EXPECT_TRUE(Validate(kData + "/good.yaml", {}, Schemas()).empty()); }

TEST(SchemaSetTest, FindsTechniqueSchemas) {
  const SchemaSet& s = Schemas();
  ASSERT_EQ(s.techniques.size(), 2u);
  EXPECT_TRUE(s.techniques.count("amp"));
  EXPECT_TRUE(s.techniques.count("channels_last"));
  EXPECT_TRUE(s.errors.empty());
  EXPECT_EQ(s.plugin_dirs, std::vector<std::string>{kData + "/plugins"});
}

TEST(SchemaSetTest, BadSchemaFilesAreReportedAndSkipped) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / ("runx_spec_schemas_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "broken.schema.json") << "{ not json";
  std::ofstream(dir / "amp.schema.json") << R"({"type": "object", "properties": {"first": {"type": "integer"}}})";
  std::ofstream(dir / "notes.txt") << "ignored";
  const SchemaSet s = SchemaSet::Load({dir.string(), kData + "/plugins", "/no/such/dir"});
  EXPECT_EQ(s.techniques.size(), 2u);  // amp from the first directory, channels_last from the second
  EXPECT_TRUE(s.techniques.at("amp")["properties"].contains("first"));
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].rfind((dir / "broken.schema.json").string() + ": ", 0), 0u);
  fs::remove_all(dir);
}

TEST(SchemaSetTest, EmbeddedSchemaIsTheOneInTheTree) {
  const SchemaSet s = SchemaSet::Load({});
  EXPECT_EQ(s.experiment, json::parse(ReadAll(std::string(RUNX_SOURCE_DIR) + "/schemas/experiment.schema.json")));
  EXPECT_NO_THROW(ParseSchemaOrThrow(s.experiment));
}

TEST(SchemaSetTest, PluginSchemasInTheTreeAreUsable) {
  // The test copies under data/plugins must not drift from the real plugin schemas.
  for (const char* name : {"amp", "channels_last"}) {
    const std::string real = std::string(RUNX_SOURCE_DIR) + "/plugins/" + name + "/schema.json";
    if (!std::filesystem::exists(real)) continue;
    EXPECT_EQ(json::parse(ReadAll(real)), Schemas().techniques.at(name)) << name;
  }
}

}  // namespace
}  // namespace runx::spec::test
