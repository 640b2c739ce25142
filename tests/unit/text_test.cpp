// The one rule for text from inputs (common/text.h): invalid UTF-8 becomes U+FFFD; control
// characters are shown as escapes.
#include "kernlens/common/text.h"

#include <gtest/gtest.h>

namespace kernlens {
namespace {

TEST(TextTest, InvalidUtf8BecomesReplacementCharacters) {
  EXPECT_FALSE(repaired_utf8("plain ascii").has_value());
  EXPECT_FALSE(repaired_utf8("caf\xC3\xA9 \xE2\x80\xA6").has_value());  // valid multi-byte
  EXPECT_EQ(repaired_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(repaired_utf8("cut \xE2\x80"), "cut \xEF\xBF\xBD");  // a sequence cut short
  EXPECT_EQ(repaired_utf8("x\xC0\xAFy"), "x\xEF\xBF\xBDy");  // an overlong "/": one bad sequence
  EXPECT_EQ(valid_utf8("ok"), "ok");
  EXPECT_EQ(valid_utf8("\xFE"), "\xEF\xBF\xBD");
}

TEST(TextTest, ControlCharactersAreEscaped) {
  EXPECT_EQ(escape_controls("void k<int>()"), "void k<int>()");
  EXPECT_EQ(escape_controls(std::string("a\x1b[2Jb\0c", 8)), "a\\x1b[2Jb\\x00c");
  EXPECT_EQ(escape_controls("line\nnext\r\tx\x7f"), "line\\nnext\\r\\tx\\x7f");
  EXPECT_EQ(escape_controls("c1 \xC2\x85 \xC2\x9B and \xC2\xA0"), "c1 \\u0085 \\u009b and \xC2\xA0");
  EXPECT_EQ(escape_controls("caf\xC3\xA9 back\\slash"), "caf\xC3\xA9 back\\slash");
  EXPECT_EQ(escape_controls_but_newlines("two\nlines\x1b"), "two\nlines\\x1b");
}

TEST(TextTest, FileNameSafeKeepsOnlyPortableCharacters) {
  EXPECT_EQ(file_name_safe("train-7.b_2"), "train-7.b_2");
  EXPECT_EQ(file_name_safe("job 12/rank:3"), "job_12_rank_3");
  EXPECT_EQ(file_name_safe("caf\xC3\xA9"), "caf__");  // each byte of a non-ASCII letter
  EXPECT_EQ(file_name_safe(""), "");
}

}  // namespace
}  // namespace kernlens
