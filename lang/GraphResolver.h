#pragma once
// The resolver of graph code (fns and externs) in two files that share this header:
// lang/Resolve.cpp resolves signatures (parameters, defaults, `where` clauses, externs' routines,
// attributes and views) and the module, lang/ResolveBody.cpp resolves bodies (statements,
// values, dims, calls, `if` and loops). Prims are lang/ResolvePrim.cpp's. Only those two files
// include it.

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/LibraryRoutine.h"
#include "lang/Dims.h"
#include "lang/Resolve.h"
#include "lang/ResolvePrim.h"
#include "symbolic/Eval.h"
#include "symbolic/Simplify.h"

namespace dsc::lang::graph {

using ir::Type;

inline std::vector<std::string> type_names() {
  std::vector<std::string> names = ir::dtype_names();
  for (const char* name : {"tensor", "int", "float", "str"})
    names.push_back(name);
  return names;
}

// The op (or intrinsic) that an operator is a call of.
inline const char* callee_of(ast::Op op) {
  switch (op) {
#define DSC_OPERATOR(Name, callee, spelling, arity)                                                \
  case ast::Op::Name:                                                                              \
    return callee;
#include "ir/Operators.def"
  }
  return "?";
}

inline bool is_arith(ast::Op op) {
  return op == ast::Op::Add || op == ast::Op::Sub || op == ast::Op::Mul || op == ast::Op::Div ||
         op == ast::Op::Mod;
}

// Calls `f(name, loc)` for every name in `e` (not callees).
template <typename F> void for_each_name(const ast::Expr& e, F&& f) {
  if (e.kind == ast::ExprKind::Name) f(e.text, e.loc);
  for (const ast::ExprPtr& x : e.operands)
    if (x) for_each_name(*x, f);
  for (const ast::Arg& a : e.args)
    if (a.value) for_each_name(*a.value, f);
}

template <typename F> void for_each_type_name(const ast::TypeNode& t, F&& f) {
  for (const ast::ExprPtr& d : t.dims)
    for_each_name(*d, f);
  for (const ast::TypeNode& field : t.fields)
    for_each_type_name(field, f);
}

inline bool mentions_name(const ast::Expr& e) {
  bool found = false;
  for_each_name(e, [&](const std::string&, SourceLoc) { found = true; });
  return found;
}

struct SymbolInfo {
  SourceLoc loc;
  std::string binder; // "parameter 'x'", "the 'let' of 'y'"
};

struct VarEntry {
  ir::VarRef var;
  SourceLoc loc;
  bool int_attr = false; // an `int` parameter, which dim lists may use like a symbol
};

// Resolves one `fn` or `extern fn`: its signature, and a function's body.
class GraphResolver {
public:
  GraphResolver(DiagnosticEngine& diags, const ImportedModules& imports)
      : diags_(diags), imports_(imports) {}

  Ref<ir::Function> function(const ast::Decl& d);
  Ref<ir::ExternFunc> external(const ast::Decl& d);
  bool views(const ast::Decl& d, ir::ExternFunc& ext);
  bool attributes(const ast::Decl& d, ir::ExternFunc& ext);

private:
  enum class TypeUse { Param, Return, Assertion };

  // ---- signature
  bool params(const std::vector<ast::Param>& ps, bool allow_defaults, std::vector<ir::VarRef>& vars,
              std::vector<ir::Expr>& defaults);
  ir::Expr default_value(const ast::Param& p, Type::Kind kind);
  std::optional<Type> type(const ast::TypeNode& t, TypeUse use, const std::string& owner);
  std::optional<std::vector<ir::WhereClause>> where(const std::vector<ast::ExprPtr>& clauses);
  void collect_let_sites(const ast::Block& b);
  void collect_let_sites(const ast::Expr& e);

  // ---- body
  ir::Expr block(const ast::Block& b, bool fn_body, const std::string& fn_name);
  bool let(const ast::Stmt& s, std::vector<ir::Binding>& bindings);
  void bind_var(const ast::Ident& name, ir::VarRef var, bool int_attr = false);
  ir::Expr value(const ast::Expr& e);
  ir::Expr name_value(const ast::Expr& e);
  ir::Expr call(const ast::Expr& e);
  ir::Expr index(const ast::Expr& e);
  ir::Expr list(const ast::Expr& e);
  ir::Expr compare(const ast::Expr& e);
  ir::Expr if_expr(const ast::Expr& e);
  ir::Expr loop_expr(const ast::Expr& e);
  std::optional<symbolic::Expr> loop_bound(const ast::LoopParts& l, const std::string& var);

  // ---- names
  const VarEntry* find_var(const std::string& name) const;
  bool is_dim_like(const ast::Expr& e, bool in_list) const;
  bool name_is_dim(const std::string& name, bool in_list) const;
  std::optional<symbolic::Expr> dim(const ast::Expr& e, bool in_list);
  void unknown_name(const std::string& name, SourceLoc loc);
  std::vector<std::string> names_in_scope() const;

  DiagnosticEngine& diags_;
  const ImportedModules& imports_;
  std::unordered_map<std::string, SymbolInfo> symbols_;
  // Symbols first named in a `let` type assertion, before the let is reached.
  std::unordered_map<std::string, SourceLoc> pending_symbols_;
  std::vector<std::unordered_map<std::string, VarEntry>> scopes_;
  std::unordered_map<std::string, SourceLoc> let_sites_;
  // The vars of the loops being resolved, innermost last: the written name and the symbol
  // it stands for (renamed when an earlier loop or a symbol has the name).
  std::vector<std::pair<std::string, std::string>> loop_vars_;
  std::set<std::string> loop_symbols_; // every loop symbol of the function so far
  int fresh_ = 0;

  // The symbol of loop var `name` when one is in scope.
  std::optional<symbolic::Expr> loop_symbol(const std::string& name) const {
    for (auto it = loop_vars_.rbegin(); it != loop_vars_.rend(); ++it)
      if (it->first == name) return symbolic::sym(it->second);
    return std::nullopt;
  }
};

} // namespace dsc::lang::graph
