#include "base/text.h"

#include <gtest/gtest.h>

namespace runx::base {
namespace {

TEST(Text, FirstLineIsTheFirstThatIsNotBlankTrimmed) {
  EXPECT_EQ(FirstLine("\n  \nsbatch: error: Invalid partition name specified  \nmore\n"),
            "sbatch: error: Invalid partition name specified");
  EXPECT_EQ(FirstLine("  one\r\ntwo"), "one");
  EXPECT_EQ(FirstLine("a\nb\nc"), "a");
  EXPECT_EQ(FirstLine("no line end"), "no line end");
  // A failure's message with LibTorch's backtrace after it: the store keeps the first line.
  EXPECT_EQ(FirstLine("CUDA out of memory. Tried to allocate 2.00 GiB\nException raised from malloc at ..."),
            "CUDA out of memory. Tried to allocate 2.00 GiB");
  EXPECT_EQ(FirstLine(" \n"), "");
  EXPECT_EQ(FirstLine("\t\r\n\n"), "");
  EXPECT_EQ(FirstLine(""), "");
}

TEST(Text, LastLineIsTheLastThatIsNotBlank) {
  EXPECT_EQ(LastLine("merged 3 stores\nwrote results/runx.db  \r\n\n  \n"), "wrote results/runx.db");
  EXPECT_EQ(LastLine("  indented stays indented\n"), "  indented stays indented");
  EXPECT_EQ(LastLine("no line end"), "no line end");
  EXPECT_EQ(LastLine("\n \t\r\n"), "");
  EXPECT_EQ(LastLine(""), "");
}

// A trial's stderr: the reason, then LibTorch's backtrace, which the error leaves out.
TEST(Text, LastLineSkipsLinesThatHoldTheGivenText) {
  const std::string stderr_text =
      "terminate called after throwing an instance of 'c10::Error'\n"
      "  what():  CUDA error: an illegal memory access was encountered\n"
      "frame #0: c10::Error::Error(...) + 0x9a\n"
      "frame #1: <unknown function> + 0x1234\n";
  EXPECT_EQ(LastLine(stderr_text, "frame #"), "  what():  CUDA error: an illegal memory access was encountered");
  EXPECT_EQ(LastLine(stderr_text), "frame #1: <unknown function> + 0x1234");
  EXPECT_EQ(LastLine("frame #0\nframe #1\n", "frame #"), "");
}

}  // namespace
}  // namespace runx::base
