// UTF-8 checks, and the located errors for strings that are not UTF-8 (nlohmann::json cannot
// dump them: before, such a file ended in exit 70 with json.exception.type_error.316).
#include <gtest/gtest.h>

#include "spec/issue.h"
#include "spec/utf8.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

const std::string kData3 =
    "model: {name: mlp}\n"
    "data: {source: synthetic, shape: [8], num_classes: 2, batch_size: 4}\n";

TEST(Utf8, FindsTheFirstInvalidByte) {
  EXPECT_EQ(InvalidUtf8At(""), std::string::npos);
  EXPECT_EQ(InvalidUtf8At("plain ascii"), std::string::npos);
  EXPECT_EQ(InvalidUtf8At("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string::npos);  // é € 😀
  EXPECT_EQ(InvalidUtf8At("a\xff"), 1u);
  EXPECT_EQ(InvalidUtf8At("ab\xc3"), 2u);            // truncated
  EXPECT_EQ(InvalidUtf8At("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(InvalidUtf8At("\xe0\x80\xaf"), 0u);      // overlong
  EXPECT_EQ(InvalidUtf8At("x\xed\xa0\x80"), 1u);     // surrogate U+D800
  EXPECT_EQ(InvalidUtf8At("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(InvalidUtf8At("\x80"), 0u);              // a lone continuation byte
}

TEST(Utf8, ReplacesAndEscapes) {
  EXPECT_EQ(ReplaceInvalidUtf8("a\xff\xfe"
                               "b\xc3\xa9"),
            "a\xEF\xBF\xBD\xEF\xBF\xBD"
            "b\xc3\xa9");
  EXPECT_EQ(EscapeInvalidUtf8("a\xff\xfe"
                              "b\xc3\xa9"),
            "a\\xff\\xfeb\xc3\xa9");
  EXPECT_EQ(Utf8Length("caf\xc3\xa9"), 4u);
  EXPECT_EQ(Quote("a\xff"), "'a\\xff'");
  EXPECT_EQ(Quote("caf\xc3\xa9"), "'caf\xc3\xa9'");
  EXPECT_EQ(InvalidUtf8Message("ok", "string"), "");
  EXPECT_EQ(InvalidUtf8Message("a\xe9t\xe9", "string"), "invalid UTF-8 byte 0xe9 in string 'a\\xe9t\\xe9'");
  // Whatever is replaced dumps as JSON.
  EXPECT_NO_THROW(nlohmann::json(ReplaceInvalidUtf8("\xff\xc0\xed\xa0\x80")).dump());
}

TEST(Utf8Messages, StringValueInTheFile) {
  EXPECT_EQ(RenderText("name: x\ndescription: caf\xe9 au lait\n" + kData3),
            "x.yaml:2:14: error: invalid UTF-8 byte 0xe9 in string 'caf\\xe9 au lait'\n"
            "    2 | description: caf\xe9 au lait\n"
            "      |              ^\n"
            "note: expected text encoded as UTF-8; save the file as UTF-8, e.g. with 'iconv -f latin1 -t utf-8'\n");
  // Quoted, and in a list.
  EXPECT_EQ(RenderText("name: x\ndescription: \"\xff\"\n" + kData3 +
                       "sweep: {axes: {data.batch_size: [4, 8]}}\n"
                       "optimizations: ['\xfe']\n"),
            "x.yaml:2:14: error: invalid UTF-8 byte 0xff in string '\\xff'\n"
            "    2 | description: \"\xff\"\n"
            "      |              ^\n"
            "note: expected text encoded as UTF-8; save the file as UTF-8, e.g. with 'iconv -f latin1 -t utf-8'\n"
            "x.yaml:6:17: error: invalid UTF-8 byte 0xfe in string '\\xfe'\n"
            "    6 | optimizations: ['\xfe']\n"
            "      |                 ^\n"
            "note: expected text encoded as UTF-8; save the file as UTF-8, e.g. with 'iconv -f latin1 -t utf-8'\n"
            "x.yaml:6:17: error: unknown technique '\xEF\xBF\xBD'\n"
            "    6 | optimizations: ['\xfe']\n"
            "      |                 ^\n"
            "note: expected one of 'amp', 'channels_last'\n");
}

TEST(Utf8Messages, KeyInTheFile) {
  EXPECT_EQ(RenderText("name: x\n" + kData3 + "train: {st\xe9ps: 5}\n"),
            "x.yaml:4:9: error: invalid UTF-8 byte 0xe9 in key 'st\\xe9ps'\n"
            "    4 | train: {st\xe9ps: 5}\n"
            "      |         ^\n"
            "note: expected text encoded as UTF-8; save the file as UTF-8, e.g. with 'iconv -f latin1 -t utf-8'\n"
            "x.yaml:4:9: error: unknown key 'st\xEF\xBF\xBDps' in 'train'\n"
            "    4 | train: {st\xe9ps: 5}\n"
            "      |         ^\n"
            "note: expected one of 'epochs', 'eval', 'optimizer', 'steps', 'warmup_steps'\n");
}

TEST(Utf8Messages, Overrides) {
  EXPECT_EQ(RenderText("name: x\n" + kData3, {"description=caf\xe9"}),
            "--set description=caf\\xe9: error: invalid UTF-8 byte 0xe9 in value 'caf\\xe9'\n"
            "note: expected text encoded as UTF-8; check the locale of the shell or script that passed it "
            "(e.g. LANG=C.UTF-8)\n");
  EXPECT_EQ(RenderText("name: x\n" + kData3, {"descr\xff=x"}),
            "--set descr\\xff=x: error: invalid UTF-8 byte 0xff in key 'descr\\xff'\n"
            "note: expected text encoded as UTF-8; check the locale of the shell or script that passed it "
            "(e.g. LANG=C.UTF-8)\n");
}

TEST(Utf8Messages, LoadThrowsASpecErrorNotATypeError) {
  EXPECT_THROW(LoadText("x.yaml", "name: x\ndescription: \xe9\n" + kData3, {}, Schemas()), SpecError);
  EXPECT_THROW(LoadText("x.yaml", "name: x\n" + kData3, Sets({"description=\xe9"}), Schemas()), SpecError);
  // Valid UTF-8 anywhere is fine.
  EXPECT_NO_THROW(LoadText("x.yaml", "name: x\ndescription: caf\xc3\xa9 \xe2\x82\xac\n" + kData3, {}, Schemas()));
}

}  // namespace
}  // namespace runx::spec::test
