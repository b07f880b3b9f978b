#include "base/terminal.h"

#include <gtest/gtest.h>

namespace runx::base {
namespace {

TEST(Printable, EscapesEveryControlCharacterAndKeepsText) {
  // The sweep value: a window title, a bell, a screen clear and a colour.
  EXPECT_EQ(Printable("/b\x1b]0;pwned\a\x1b[2J\x1b[31m.pt"), "/b\\e]0;pwned\\x07\\e[2J\\e[31m.pt");
  EXPECT_EQ(Printable("a\nb\rc\td\x7f"
                      "e"),
            "a\\nb\\rc\\td\\x7fe");
  EXPECT_EQ(Printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(Printable("csi \xc2\x9b"
                      "31m"),
            "csi \\u009b31m");  // U+009B, the one-byte CSI
  EXPECT_EQ(Printable("lr=0.05 µs ×2 — ok"), "lr=0.05 µs ×2 — ok");
  EXPECT_EQ(Printable(""), "");
}

}  // namespace
}  // namespace runx::base
