// ir/Operators.def is the one list of .dsc's infix and prefix operators. lang/Parser.y restates
// their spellings as tokens, because Bison cannot read C++; support/Precedence.h gives the infix
// ones their levels, and symbolic/Syntax.h the node each builds in a dim. This checks that they
// all agree with the table.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "lang/Ast.h"
#include "support/File.h"
#include "support/Precedence.h"
#include "symbolic/Syntax.h"
#include "tests/unit/SourceDir.h"

namespace dsc::lang {
namespace {

using testing::source_dir;

// (arity, spelling, name), as the table lists them.
using Row = std::tuple<int, std::string, std::string>;

std::vector<Row> table_rows() {
  std::vector<Row> rows = {
#define DSC_OPERATOR(Name, callee, spelling, arity) {arity, spelling, #Name},
#include "ir/Operators.def"
  };
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(OperatorsTest, GrammarRulesBuildTheTablesOperators) {
  std::string error;
  std::optional<std::string> grammar = read_file(source_dir() + "/lang/Parser.y", &error);
  ASSERT_TRUE(grammar) << error;
  // `expr "+" expr { ... Op::Add ...` and `"-" expr %prec UNARY { ... Op::Neg ...`.
  const std::regex rule(R"re((expr )?"([^"]+)" expr[^{\n]*\{[^}\n]*Op::(\w+))re");
  std::vector<Row> rules;
  for (auto it = std::sregex_iterator(grammar->begin(), grammar->end(), rule);
       it != std::sregex_iterator(); ++it) {
    rules.emplace_back((*it)[1].matched ? 2 : 1, (*it)[2].str(), (*it)[3].str());
  }
  std::sort(rules.begin(), rules.end());
  EXPECT_EQ(rules, table_rows());
}

TEST(OperatorsTest, SpellingsAgreeWithPrecedenceAndDims) {
  std::vector<std::string> infix, levels;
  for (const Row& row : table_rows()) {
    const std::string& spelling = std::get<1>(row);
    if (std::get<0>(row) == 2) {
      infix.push_back(spelling);
      EXPECT_NE(symbolic::infix_operator(spelling), nullptr) << spelling << " in a dim";
    } else {
      EXPECT_NE(symbolic::prefix_operator(spelling), nullptr) << spelling << " in a dim";
    }
  }
  for (const precedence::InfixOperator& op : precedence::kInfixOperators)
    levels.emplace_back(op.spelling);
  std::sort(infix.begin(), infix.end());
  std::sort(levels.begin(), levels.end());
  EXPECT_EQ(infix, levels);
}

TEST(OperatorsTest, SpellingsOfTheAst) {
  EXPECT_STREQ(ast::op_spelling(ast::Op::Mod), "%");
  EXPECT_STREQ(ast::op_spelling(ast::Op::Neg), "-");
  EXPECT_STREQ(ast::op_spelling(ast::Op::And), "&&");
}

} // namespace
} // namespace dsc::lang
