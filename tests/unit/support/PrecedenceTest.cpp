// support/Precedence.h is the one precedence table; lang/Parser.y restates it as Bison
// declarations because Bison cannot read C++. This checks that the restatement agrees: Parser.y's
// %left lines, in order, hold exactly the table's operators level by level.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/File.h"
#include "support/Precedence.h"
#include "tests/unit/SourceDir.h"

namespace dsc {
namespace {

using testing::source_dir;

TEST(PrecedenceTest, BisonDeclarationsMatchTheTable) {
  std::string error;
  std::optional<std::string> grammar = read_file(source_dir() + "/lang/Parser.y", &error);
  ASSERT_TRUE(grammar) << error;

  // Parser.y's levels, loosest first: each %left line's quoted operators.
  std::vector<std::vector<std::string>> declared;
  std::istringstream lines(*grammar);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("%left", 0) != 0) continue;
    std::vector<std::string> ops;
    for (size_t open = line.find('"'); open != std::string::npos;) {
      size_t close = line.find('"', open + 1);
      ops.push_back(line.substr(open + 1, close - open - 1));
      open = line.find('"', close + 1);
    }
    declared.push_back(ops);
  }

  std::vector<std::vector<std::string>> table;
  int level = -1;
  for (const precedence::InfixOperator& op : precedence::kInfixOperators) {
    if (op.level != level) table.emplace_back();
    level = op.level;
    table.back().emplace_back(op.spelling);
  }
  EXPECT_EQ(declared, table);
}

TEST(PrecedenceTest, Levels) {
  using namespace precedence;
  static_assert(infix_level("||") < infix_level("&&"));
  static_assert(infix_level("&&") < infix_level("<="));
  static_assert(infix_level("<=") < infix_level("-"));
  static_assert(infix_level("-") < infix_level("%"));
  static_assert(infix_level("%") < kUnary && kUnary < kAtom);
  static_assert(infix_level("min") == kAtom);
  static_assert(infix_level("") == kAtom);
  // The table is loosest first, so that a printer's "next tighter level" is level + 1.
  int previous = kLowest;
  for (const InfixOperator& op : kInfixOperators) {
    EXPECT_GE(op.level, previous) << op.spelling;
    EXPECT_LE(op.level, previous + 1) << op.spelling;
    previous = op.level;
  }
}

} // namespace
} // namespace dsc
