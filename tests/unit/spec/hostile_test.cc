// Hostile input: one clear diagnostic each, quickly, never a crash or a hang.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "test_util.h"

namespace runx::spec::test {
namespace {

constexpr double kQuick = 1.0;  // seconds

/// A file in the test's temporary directory, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& text)
      : path_(testing::TempDir() + "runx_spec_" + std::to_string(::getpid()) + "_" +
              testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml") {
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<Diagnostic> TimedValidate(const std::string& path, double* seconds) {
  std::vector<Diagnostic> diags;
  *seconds = Seconds([&] { diags = Validate(path, {}, Schemas()); });
  return diags;
}

std::string TimedRenderText(const std::string& text, double* seconds) {
  std::string out;
  *seconds = Seconds([&] { out = RenderText(text); });
  return out;
}

TEST(Hostile, AliasBomb) {
  std::string out;
  const double s = Seconds([&] { out = RenderFile("alias_bomb.yaml"); });
  EXPECT_LT(s, kQuick);
  EXPECT_EQ(out,
            "alias_bomb.yaml:10:8: error: document expands to more than 100000 nodes\n"
            "   10 | f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
            "      |        ^\n"
            "note: each alias ('*name') is a copy of its anchor ('&name'), so anchors and aliases that nest "
            "multiply the document; write the values out instead\n");
}

TEST(Hostile, DeepNesting) {
  std::string out;
  const double s = Seconds([&] { out = RenderFile("deep_nesting.yaml"); });
  EXPECT_LT(s, kQuick);
  EXPECT_EQ(out,
            "deep_nesting.yaml:3:70: error: mappings and lists nest more than 64 levels deep\n"
            "    3 | ..." +
                std::string(97, '[') + std::string(23, ']') +
                "...\n"
                "      |    " +
                std::string(60, ' ') + "^\n");
}

TEST(Hostile, NestingBeyondYamlCppsOwnLimit) {
  // Deep enough that yaml-cpp throws DeepRecursion before any event reaches runx.
  double s = 0;
  const std::string flow = TimedRenderText("a: " + std::string(5000, '[') + std::string(5000, ']') + "\n", &s);
  EXPECT_LT(s, kQuick);
  EXPECT_EQ(flow.substr(0, flow.find('\n')), "x.yaml:1:67: error: mappings and lists nest more than 64 levels deep");
  std::string block;
  for (int i = 0; i < 400; ++i) block += std::string(2 * i, ' ') + "k:\n";
  const std::string nested = TimedRenderText(block, &s);
  EXPECT_LT(s, kQuick);
  EXPECT_EQ(nested.substr(0, nested.find('\n')),
            "x.yaml:65:129: error: mappings and lists nest more than 64 levels deep");
}

TEST(Hostile, ManyNodesWithoutAliases) {
  std::string list = "name: x\nmodel: {name: mlp}\ndata: {source: synthetic, batch_size: 1, shape: [";
  for (int i = 0; i < 200000; ++i) list += "1,";
  list += "1]}\n";
  double s = 0;
  const std::string out = TimedRenderText(list, &s);
  EXPECT_LT(s, kQuick);
  EXPECT_EQ(out.substr(0, out.find('\n')), "x.yaml:3:200020: error: document expands to more than 100000 nodes");
}

TEST(Hostile, FileTooLarge) {
  const TempFile big(std::string(kMaxFileBytes + 1, '#'));
  double s = 0;
  const auto diags = TimedValidate(big.path(), &s);
  EXPECT_LT(s, kQuick);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].Render(), big.path() + ": error: file is larger than 1 MiB; experiment files are a few KiB\n");
}

TEST(Hostile, EndlessDeviceFile) {
  double s = 0;
  const auto diags = TimedValidate("/dev/zero", &s);
  EXPECT_LT(s, kQuick);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].Render(), "/dev/zero: error: file is larger than 1 MiB; experiment files are a few KiB\n");
}

TEST(Hostile, MissingOrUnreadableFile) {
  EXPECT_EQ(RenderFile("no-such-file.yaml"), "no-such-file.yaml: error: cannot read file: No such file or directory\n");
  EXPECT_EQ(RenderFile("plugins"), "plugins: error: cannot read file: Is a directory\n");
  try {
    Load(kData + "/no-such-file.yaml", {}, Schemas());
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.Render(), kData +
                              "/no-such-file.yaml: error: cannot read file: No such file or directory\n1 error in " +
                              kData + "/no-such-file.yaml\n");
  }
}

TEST(Hostile, HugeValue) {
  double s = 0;
  const std::string out = TimedRenderText("name: " + std::string(200000, 'a') + "\n", &s);
  EXPECT_LT(s, kQuick);
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "x.yaml:1:7: error: value of 200000 bytes is too long; values are limited to 4096 bytes");
}

TEST(Hostile, BinaryGarbage) {
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 20000; ++i) garbage += static_cast<char>((x = x * 1103515245 + 12345) >> 24);
  double s = 0;
  const std::string out = TimedRenderText(garbage, &s);
  EXPECT_LT(s, kQuick);
  EXPECT_NE(out.find("error: "), std::string::npos);
}

TEST(Hostile, TooManyErrorsAreCapped) {
  std::string text = "name: x\nmodel: {name: mlp, hidden: [";
  for (int i = 0; i < 5000; ++i) text += "-1, ";
  text += "-1]}\ndata: {source: fashion-mnist, batch_size: 1}\n";
  std::vector<Diagnostic> diags;
  const double s = Seconds([&] { diags = ValidateText("x.yaml", text, {}, Schemas()); });
  EXPECT_LT(s, kQuick);
  ASSERT_EQ(diags.size(), kMaxDiagnostics + 1);
  EXPECT_EQ(diags[0].message, "'model.hidden[0]' must be >= 1, got -1");
  EXPECT_EQ(diags.back().Render(), "x.yaml: error: too many errors; 4951 more not shown\n");
}

TEST(Hostile, ControlCharactersInValuesAreEscaped) {
  const std::string out =
      RenderText("name: x\nmodel: {name: \"a\\e[2Jb\"}\ndata: {source: fashion-mnist, batch_size: 1}\n");
  EXPECT_EQ(out.substr(0, out.find('\n')), "x.yaml:2:15: error: unknown model 'a\\x1b[2Jb'");
}

}  // namespace
}  // namespace runx::spec::test
