#include <gtest/gtest.h>

#include "support/Suggest.h"

namespace dsc {
namespace {

TEST(SuggestTest, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("softmax", "sofmax"), 1u); // deletion
  EXPECT_EQ(edit_distance("matmul", "matmull"), 1u); // insertion
  EXPECT_EQ(edit_distance("f13", "f16"), 1u);        // substitution
  EXPECT_EQ(edit_distance("mxa", "max"), 1u);        // swap of neighbours
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("ab", "ba"), edit_distance("ba", "ab"));
}

TEST(SuggestTest, ClosestName) {
  EXPECT_EQ(closest_name("matmull", {"matmul", "max", "mean"}), "matmul");
  EXPECT_EQ(closest_name("mxa", {"max", "min"}), "max");
  EXPECT_EQ(closest_name("axes", {"axis", "keepdim"}), "axis");
  EXPECT_EQ(closest_name("zzzzzz", {"matmul", "max"}), "");
  // A third of the name may be wrong: two edits in six characters, not three.
  EXPECT_EQ(closest_name("hiddne", {"hidden"}), "hidden");
  EXPECT_EQ(closest_name("hxddxn", {"hidden"}), "hidden");
  EXPECT_EQ(closest_name("hxxdxn", {"hidden"}), "");
  // Short names get one edit, never a rewrite of every character.
  EXPECT_EQ(closest_name("x", {"y"}), "");
  EXPECT_EQ(closest_name("ab", {"abc"}), "abc");
  EXPECT_EQ(closest_name("abc", {"add"}), "");
  // The name itself and empty names are not suggestions.
  EXPECT_EQ(closest_name("max", {"max"}), "");
  EXPECT_EQ(closest_name("a", {""}), "");
  // Ties go to the alphabetically first, whatever the order given.
  EXPECT_EQ(closest_name("f13", {"f32", "f16", "f18"}), "f16");
  EXPECT_EQ(closest_name("f13", {"f18", "f16"}), "f16");
}

TEST(SuggestTest, Note) {
  Diagnostic d;
  suggest(d, "sofmax", {"softmax", "sum"}, SourceLoc{1, 2, 3});
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].message, "did you mean 'softmax'?");
  EXPECT_EQ(d.notes[0].loc.col, 3u);
  suggest(d, "zzz", {"softmax"});
  EXPECT_EQ(d.notes.size(), 1u);
}

} // namespace
} // namespace dsc
