#pragma once
// Helpers on the IR that several passes share: which fns are generic, the symbols that types,
// expressions and prim statements mention, the bindings a block's result needs, and a fn
// rebuilt around a new body.

#include <set>
#include <string>
#include <vector>

#include "ir/Module.h"

namespace dsc::passes {

// A fn with an `any` or attribute parameter (stdlib style): it is instantiated at each call,
// never typed or lowered on its own.
bool is_generic(const ir::Function& f);

// Adds the free symbols of `e` (none when it is undefined) to `out`.
void add_symbols(const symbolic::Expr& e, std::set<std::string>& out);
// Adds the free symbols of every dim of `t`, tuple fields included, to `out`.
void add_symbols(const ir::Type& t, std::set<std::string>& out);

// Adds the symbols written in `e` (dims lists, asserted types of bindings), and with `all`
// those of every inferred type too, to `symbols`; with `names`, the names of its vars and of
// the vars its blocks bind to *names.
void collect_symbols(const ir::Expr& e, bool all, std::set<std::string>& symbols,
                     std::set<std::string>* names = nullptr);

// The statement a Seq of one statement wraps (through nested ones); `s` itself otherwise.
const ir::Stmt& unwrap(const ir::Stmt& s);

// The names a prim statement uses: the free symbols of its indices, loop bounds and
// allocation shapes (loop variables among them where an index uses one), its loop variables,
// and the locals and allocations it declares.
struct StmtNames {
  std::set<std::string> symbols;
  std::set<std::string> loop_vars;
  std::set<std::string> declared;
};
StmtNames stmt_names(const ir::Stmt& s);

// Every name a prim uses (its buffers, the symbols of their dims and of its body, its loop
// variables, locals and allocations), so that a pass can make fresh ones.
std::set<std::string> prim_names(const ir::PrimFunc& p);

// The bindings of `body` that its result needs, directly or through other bindings, in their
// order. Every graph value is pure (ops, prims in destination-passing style, library calls),
// and the shape facts the host code checks belong to the fn, not to its bindings, so a binding
// nothing reads can go without changing what the fn computes or checks.
std::vector<ir::Binding> live_bindings(const ir::Block& body);

// A new fn with f's name, parameters, defaults, where clauses and location, and the given
// return type, body and facts.
Ref<ir::Function> rebuild_function(const ir::Function& f, ir::Type ret_type, ir::Expr body,
                                   std::vector<ir::ShapeFact> facts);

} // namespace dsc::passes
