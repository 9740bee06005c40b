#pragma once
// Shape-test helpers shared by the op and pass tests: symbolic dims, predicates and IR types
// written as text (`f32[B, S*12, 64]`, `(f32[S], i64[])`, `tensor`).

#include <optional>
#include <string>
#include <vector>

#include "ir/Type.h"
#include "support/Assert.h"
#include "symbolic/Parser.h"

namespace dsc::testing {

namespace sym = symbolic;

inline sym::Expr dim(const std::string& text) {
  sym::ParseResult r = sym::parse_expr(text);
  internal_assert(r.ok()) << "bad dim in test: " << text;
  return r.expr;
}

inline sym::Expr pred(const std::string& text) {
  sym::ParseResult r = sym::parse_predicate(text);
  internal_assert(r.ok()) << "bad predicate in test: " << text;
  return r.expr;
}

inline std::vector<std::string> split_top(const std::string& s) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (cur.find_first_not_of(' ') != std::string::npos) parts.push_back(cur);
  return parts;
}

// "f32[B, S]", "(f32[S], i64[])", "tensor", "int", "float", "bool", "str", "?".
inline ir::Type type(std::string text) {
  while (!text.empty() && text.front() == ' ')
    text.erase(text.begin());
  using K = ir::Type::Kind;
  if (text == "?") return ir::Type::unknown();
  if (text == "tensor") return ir::Type::of_kind(K::Any);
  if (text == "int") return ir::Type::of_kind(K::Int);
  if (text == "float") return ir::Type::of_kind(K::Float);
  if (text == "bool") return ir::Type::of_kind(K::Bool);
  if (text == "str") return ir::Type::of_kind(K::Str);
  if (text.front() == '(') {
    std::vector<ir::Type> fields;
    for (const std::string& p : split_top(text.substr(1, text.size() - 2)))
      fields.push_back(type(p));
    return ir::Type::tuple(std::move(fields));
  }
  size_t open = text.find('[');
  std::optional<ir::DType> d = ir::parse_dtype(text.substr(0, open));
  internal_assert(d && text.back() == ']') << "bad type in test: " << text;
  std::vector<sym::Expr> dims;
  for (const std::string& p : split_top(text.substr(open + 1, text.size() - open - 2)))
    dims.push_back(dim(p));
  return ir::Type::tensor(*d, std::move(dims));
}

} // namespace dsc::testing
