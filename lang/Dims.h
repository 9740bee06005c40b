#pragma once
// Internal to the front end: turning syntax into symbolic expressions (dims, `where` clauses,
// loop bounds, prim indices), and the "did you mean" helper every resolver shares.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lang/Ast.h"
#include "support/Diagnostics.h"
#include "support/Suggest.h" // closest_name and suggest, for the resolvers
#include "symbolic/Expr.h"
#include "symbolic/Syntax.h"

namespace dsc::lang {

struct DimContext {
  DiagnosticEngine& diags;
  // Resolves a name that can be a symbol (is_symbol_name, not dotted) to one, or reports why it
  // cannot and returns nullopt.
  std::function<std::optional<symbolic::Expr>(const std::string& name, SourceLoc loc)> name;
  // Where `?` may stand (types): the per-function counter for the `_dN` names; null elsewhere.
  int* fresh = nullptr;
  // What the expression is, for messages: "a dim", "a 'where' clause", "a loop bound".
  const char* what = "a dim";
};

// The expression as symbolic::Expr, built raw (not simplified); nullopt after a diagnostic.
// The result may be an integer or a predicate; callers check which they need.
std::optional<symbolic::Expr> to_symbolic(const ast::Expr& e, DimContext& ctx);

// As to_symbolic, but the result must be an integer expression.
std::optional<symbolic::Expr> to_dim(const ast::Expr& e, DimContext& ctx);
// As to_symbolic, but the result must be a predicate.
std::optional<symbolic::Expr> to_predicate(const ast::Expr& e, DimContext& ctx);

// True when `name` can be a symbol: symbolic::Sym excludes the dim grammar's reserved words
// (keywords never reach here).
using symbolic::is_symbol_name;
// `_d0`, `_d17`: the names `?` dims get.
bool is_anonymous_symbol_name(std::string_view name);
std::string anonymous_symbol_name(int index);

// Our dtype for another framework's spelling of it ("float32" -> "f32"), or null.
const char* dtype_alias(std::string_view name);
// The same for an unknown dtype, knowing the spellings of other frameworks (float32, int64).
void suggest_dtype(Diagnostic& d, std::string_view name);

// The literal's value, or nullopt after "integer literal too large" (a magnitude of 2^63 is
// only valid negated).
std::optional<int64_t> int_literal(const ast::Expr& e, bool negated, DiagnosticEngine& diags);

// The name of an AST node kind for messages: "a string", "a list", "an if expression".
const char* describe_expr(const ast::Expr& e);

} // namespace dsc::lang
