// The columns of ir/Ops.def as the registry answers them: every op has a family, a fusion
// pattern and a result kind, and OpId, names and definitions agree.

#include <gtest/gtest.h>

#include <string>

#include "ir/Intrinsics.h"
#include "ir/OpRegistry.h"

namespace dsc::ir {
namespace {

TEST(OpTable, IdsNamesAndDefinitionsAgree) {
  for (const OpDef* op : all_ops()) {
    EXPECT_EQ(&op_def(op->id), op) << op->name;
    EXPECT_EQ(std::string(op_name(op->id)), op->name);
    EXPECT_EQ(find_op(op->name), op);
  }
  EXPECT_EQ(std::string(op_name(OpId::reshape)), "reshape");
}

TEST(OpTable, EveryOpHasAPattern) {
  for (const OpDef* op : all_ops())
    EXPECT_NE(std::string(op_pattern_name(op->pattern)), "?") << op->name;
  auto pattern = [](const char* name) { return op_pattern_name(find_op(name)->pattern); };
  EXPECT_STREQ(pattern("exp"), "elementwise");
  EXPECT_STREQ(pattern("add"), "broadcast");
  EXPECT_STREQ(pattern("where"), "broadcast");
  EXPECT_STREQ(pattern("permute"), "injective");
  EXPECT_STREQ(pattern("reshape"), "injective");
  EXPECT_STREQ(pattern("sum"), "reduction");
  EXPECT_STREQ(pattern("matmul"), "output-fusable");
  EXPECT_STREQ(pattern("conv2d"), "output-fusable");
  EXPECT_STREQ(pattern("nonzero"), "opaque");
}

TEST(OpTable, OnlyReshapeAndFirstRowsAreViews) {
  for (const OpDef* op : all_ops())
    EXPECT_EQ(op->is_view(), op->id == OpId::reshape || op->id == OpId::first_rows) << op->name;
  EXPECT_TRUE(is_view_op("reshape"));
  EXPECT_FALSE(is_view_op("permute"));
  EXPECT_FALSE(is_view_op("nn.softmax")) << "not an op";
}

// A unary intrinsic listed in Ops.def is an elementwise op with no code of its own.
TEST(OpTable, UnaryIntrinsicsThatAreOpsAreElementwise) {
  for (const IntrinsicDef& fn : all_intrinsics()) {
    const OpDef* op = find_op(fn.name);
    if (!op || fn.arity != 1) continue;
    EXPECT_EQ(op->family, OpFamily::Elementwise) << fn.name;
    EXPECT_EQ(op->pattern, OpPattern::Elementwise) << fn.name;
    EXPECT_EQ(op->params.size(), 1u) << fn.name;
  }
}

} // namespace
} // namespace dsc::ir
