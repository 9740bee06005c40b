#include "symbolic/Syntax.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "support/WordList.h"

namespace dsc::symbolic {

namespace {

template <typename Node> Expr make_binary(Expr a, Expr b) {
  return Node::make(std::move(a), std::move(b));
}

template <typename Node>
constexpr InfixOperator infix(std::string_view spelling, Operands operands, bool swapped = false) {
  return {spelling, operands, Node::node_kind, swapped, make_binary<Node>};
}

// In support/Precedence.h's order. A node's spelling is its first unswapped row.
constexpr InfixOperator kInfixOperators[] = {
    infix<Or>("||", Operands::Predicates),
    infix<And>("&&", Operands::Predicates),
    infix<EQ>("==", Operands::Integers),
    infix<NE>("!=", Operands::Integers),
    infix<LT>("<", Operands::Integers),
    infix<LE>("<=", Operands::Integers),
    infix<LT>(">", Operands::Integers, /*swapped=*/true),
    infix<LE>(">=", Operands::Integers, /*swapped=*/true),
    infix<Add>("+", Operands::Integers),
    infix<Sub>("-", Operands::Integers),
    infix<Mul>("*", Operands::Integers),
    infix<FloorDiv>("/", Operands::Integers),
    infix<FloorMod>("%", Operands::Integers),
};

// Raw, unlike unary operator- (Expr.h), which folds a constant.
Expr negate(Expr x) {
  return Mul::make(Const::make(-1), std::move(x));
}

constexpr PrefixOperator kPrefixOperators[] = {
    {"-", Operands::Integers, negate},
    {"!", Operands::Predicates, logical_not},
};

constexpr Function kFunctions[] = {
    {"min", ExprKind::Min, make_binary<Min>},
    {"max", ExprKind::Max, make_binary<Max>},
};

// Indexed by the value.
constexpr std::string_view kBoolLiterals[] = {"false", "true"};

// The first row of `table` that `matches`, or null.
template <typename Row, size_t N, typename Match>
const Row* find_row(const Row (&table)[N], Match matches) {
  const Row* row = std::find_if(table, table + N, matches);
  return row == table + N ? nullptr : row;
}

} // namespace

const InfixOperator* infix_operator(std::string_view spelling) {
  return find_row(kInfixOperators,
                  [&](const InfixOperator& op) { return op.spelling == spelling; });
}

std::string_view infix_spelling(ExprKind kind) {
  const InfixOperator* op = find_row(
      kInfixOperators, [&](const InfixOperator& row) { return row.node == kind && !row.swapped; });
  return op ? op->spelling : std::string_view();
}

const PrefixOperator* prefix_operator(std::string_view spelling) {
  return find_row(kPrefixOperators,
                  [&](const PrefixOperator& op) { return op.spelling == spelling; });
}

const Function* function(std::string_view name) {
  return find_row(kFunctions, [&](const Function& f) { return f.name == name; });
}

std::string_view function_name(ExprKind kind) {
  const Function* f = find_row(kFunctions, [&](const Function& row) { return row.node == kind; });
  return f ? f->name : std::string_view();
}

std::string function_list(std::string_view suffix) {
  std::vector<std::string> words;
  for (const auto& f : kFunctions) words.push_back(std::string(f.name) + std::string(suffix));
  return word_list(words);
}

std::optional<bool> bool_literal(std::string_view word) {
  for (bool value : {false, true})
    if (word == bool_spelling(value)) return value;
  return std::nullopt;
}

std::string_view bool_spelling(bool value) {
  return kBoolLiterals[value ? 1 : 0];
}

bool is_symbol_name(std::string_view name) {
  if (name.empty() || !is_name_start(name[0]) || bool_literal(name) || function(name)) return false;
  return std::all_of(name.begin(), name.end(), is_name_char);
}

} // namespace dsc::symbolic
