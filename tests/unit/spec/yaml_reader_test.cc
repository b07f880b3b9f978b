// YAML -> JSON with origins: scalar typing (YAML 1.2 core schema), keys, aliases, positions.
#include "spec/yaml_reader.h"

#include <gtest/gtest.h>

namespace runx::spec {
namespace {

using nlohmann::json;

json Read(const std::string& text) {
  YamlDocument doc = ReadYaml(text);
  EXPECT_TRUE(doc.problems.empty()) << doc.problems.front().message;
  return doc.value;
}

std::string OnlyProblem(const std::string& text) {
  const YamlDocument doc = ReadYaml(text);
  if (doc.problems.size() != 1) return "expected one problem, got " + std::to_string(doc.problems.size());
  const auto& p = doc.problems.front();
  std::string out = std::to_string(p.where.line) + ":" + std::to_string(p.where.column) + ": " + p.message;
  for (const auto& n : p.notes) out += " | " + n;
  return out;
}

TEST(YamlReader, TypesScalarsLikeTheYaml12CoreSchema) {
  const json v = Read(
      "int: 128\nneg: -4\nplus: +5\nhex: 0x1f\noct: 0o17\nfloat: 0.1\nexp: 1e-3\ndot: .5\n"
      "t: true\nf: False\nnull1: null\nnull2: ~\nempty:\nyes: yes\nword: resnet50\n"
      "quoted: '128'\ndquoted: \"true\"\ntagged: !!str 5\nblock: |\n  text\nver: 1.2.3\n");
  EXPECT_EQ(v["int"], json(128));
  EXPECT_TRUE(v["int"].is_number_integer());
  EXPECT_EQ(v["neg"], json(-4));
  EXPECT_EQ(v["plus"], json(5));
  EXPECT_EQ(v["hex"], json(31));
  EXPECT_EQ(v["oct"], json(15));
  EXPECT_TRUE(v["float"].is_number_float());
  EXPECT_DOUBLE_EQ(v["float"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(v["exp"].get<double>(), 0.001);
  EXPECT_DOUBLE_EQ(v["dot"].get<double>(), 0.5);
  EXPECT_EQ(v["t"], json(true));
  EXPECT_EQ(v["f"], json(false));
  EXPECT_TRUE(v["null1"].is_null());
  EXPECT_TRUE(v["null2"].is_null());
  EXPECT_TRUE(v["empty"].is_null());
  EXPECT_EQ(v["yes"], json("yes"));  // YAML 1.1's boolean, a string in 1.2
  EXPECT_EQ(v["word"], json("resnet50"));
  EXPECT_EQ(v["quoted"], json("128"));
  EXPECT_EQ(v["dquoted"], json("true"));
  EXPECT_EQ(v["tagged"], json("5"));
  EXPECT_EQ(v["block"], json("text\n"));
  EXPECT_EQ(v["ver"], json("1.2.3"));
}

TEST(YamlReader, ReadsNestedMappingsAndLists) {
  EXPECT_EQ(Read("a: {b: [1, {c: x}], d: []}\ne:\n  - 1\n  - two\n"),
            json::parse(R"({"a": {"b": [1, {"c": "x"}], "d": []}, "e": [1, "two"]})"));
}

TEST(YamlReader, RecordsWhereEachValueAndKeyIs) {
  const YamlDocument doc = ReadYaml("name: x\ndata:\n  batch_size: 64\n  shape: [3, 224]\nempty:\n");
  const Origin* bs = doc.origins.Nearest("/data/batch_size");
  ASSERT_NE(bs, nullptr);
  EXPECT_EQ(bs->value.line, 3);
  EXPECT_EQ(bs->value.column, 15);
  EXPECT_EQ(bs->key.line, 3);
  EXPECT_EQ(bs->key.column, 3);
  const Origin* item = doc.origins.Nearest("/data/shape/1");
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->value.column, 14);
  // An empty value points at its key, not at whatever comes next.
  const Origin* empty = doc.origins.Nearest("/empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->value.line, 5);
  EXPECT_EQ(empty->value.column, 1);
  EXPECT_EQ(doc.origins.Nearest("/data/missing"), doc.origins.Nearest("/data"));
}

TEST(YamlReader, CopiesAliasesAndPointsAtTheAlias) {
  const YamlDocument doc = ReadYaml("base: &b {lr: 0.1, momentum: 0.9}\nmore: *b\n");
  EXPECT_TRUE(doc.problems.empty());
  EXPECT_EQ(doc.value["more"], doc.value["base"]);
  EXPECT_EQ(doc.origins.Nearest("/more")->value.line, 2);
  EXPECT_EQ(doc.origins.Nearest("/more/lr")->value.line, 1);  // inside: where the anchor wrote it
}

TEST(YamlReader, AnAliasAsADuplicateValueLeavesTheFirstAlone) {
  const YamlDocument doc = ReadYaml("x: &x {a: 1}\ny:\n  b: 2\n  c: 3\ny: *x\n");
  EXPECT_EQ(doc.value["y"], json::parse(R"({"b": 2, "c": 3})"));
  EXPECT_EQ(doc.origins.Nearest("/y/b")->value.line, 3);
  EXPECT_EQ(doc.origins.Nearest("/y")->key.line, 2);
  EXPECT_EQ(doc.origins.Nearest("/y/a"), doc.origins.Nearest("/y"));
}

TEST(YamlReader, EmptyInputs) {
  for (const char* text : {"", "\n\n", "# only a comment\n", "---\n", "~\n"}) {
    const YamlDocument doc = ReadYaml(text);
    EXPECT_TRUE(doc.empty) << text;
    EXPECT_TRUE(doc.problems.empty()) << text;
  }
}

TEST(YamlReader, ReportsDuplicateKeysAtTheSecond) {
  EXPECT_EQ(OnlyProblem("a: 1\nb:\n  c: 1\n  c: 2\n"), "4:3: duplicate key 'c' in 'b' | first defined at line 3");
  EXPECT_EQ(OnlyProblem("a: 1\na: {x: 1}\n"), "2:1: duplicate key 'a' | first defined at line 1");
  EXPECT_EQ(ReadYaml("a: 1\na: {x: 1}\n").value, json::parse(R"({"a": 1})"));  // the first stays
}

TEST(YamlReader, KeysMustBeStrings) {
  EXPECT_EQ(OnlyProblem("1: x\n"),
            "1:1: mapping keys must be strings, got integer 1 | quote the key to use it as text: \"1\"");
  EXPECT_EQ(OnlyProblem("'1': x\n"), "expected one problem, got 0");
  EXPECT_EQ(OnlyProblem("? [a, b]\n: x\n"), "1:3: mapping keys must be strings, got a list");
  EXPECT_EQ(OnlyProblem("{a: 1}: x\n"), "1:1: mapping keys must be strings, got a mapping");
  // The rest is still read.
  const YamlDocument doc = ReadYaml("? [a, b]\n: {x: 1}\nc: &k [1]\nd: 2\n*k : [3]\ne: 4\n");
  EXPECT_EQ(doc.value, json::parse(R"({"c": [1], "d": 2, "e": 4})"));
  EXPECT_EQ(doc.problems.size(), 2u);
}

TEST(YamlReader, ScalarsThatCannotBeNumbers) {
  EXPECT_EQ(OnlyProblem("a: 99999999999999999999999\n"), "1:4: integer '99999999999999999999999' is out of range");
  EXPECT_EQ(OnlyProblem("a: 1e999\n"), "1:4: number '1e999' is out of range");
  EXPECT_EQ(OnlyProblem("a: .inf\n"), "1:4: '.inf' is not a finite number; runx accepts only finite numbers");
  EXPECT_EQ(OnlyProblem("a: !!int abc\n"), "1:4: 'abc' is not a valid !!int");
  EXPECT_EQ(OnlyProblem("a: !custom x\n"), "1:4: unsupported tag '!custom'");
  EXPECT_EQ(Read("a: 18446744073709551615\n")["a"], json(18446744073709551615ull));
  EXPECT_EQ(Read("a: -9223372036854775808\n")["a"], json(INT64_MIN));
}

TEST(YamlReader, SyntaxErrorsCarryThePlace) {
  EXPECT_EQ(OnlyProblem("a: [1, 2\n"), "2:1: end of sequence flow not found | a '[' here has no matching ']'");
  EXPECT_EQ(OnlyProblem("a: *nowhere\n"),
            "1:4: the referenced anchor is not defined | define the anchor ('&name') before its alias ('*name')");
  EXPECT_TRUE(ReadYaml("a: [1, 2\n").fatal);
}

TEST(YamlReader, OneDocumentOnly) {
  EXPECT_EQ(OnlyProblem("a: 1\n---\nb: 2\n"),
            "2:1: file holds more than one YAML document | runx reads one experiment per file; remove the '---' or "
            "split the file");
}

TEST(YamlReader, RecursiveAliasIsAnError) {
  const YamlDocument doc = ReadYaml("a: &a [1, *a]\n");
  ASSERT_EQ(doc.problems.size(), 1u);
  EXPECT_TRUE(doc.fatal);
}

TEST(YamlReader, LimitsAreConfigurable) {
  ReadLimits small;
  small.max_nodes = 5;
  small.max_depth = 2;
  small.max_scalar_bytes = 3;
  EXPECT_TRUE(ReadYaml("a: [1, 2, 3, 4, 5]\n", small).fatal);
  EXPECT_TRUE(ReadYaml("a: [[1]]\n", small).fatal);
  EXPECT_FALSE(ReadYaml("a: [1]\n", small).fatal);
  EXPECT_TRUE(ReadYaml("a: abcd\n", small).fatal);
}

}  // namespace
}  // namespace runx::spec
