#pragma once
// Prints IR as .dsc text that the front end parses back to a structurally equal module
// (see StructuralEqual.h). Inferred types of let bindings are printed as trailing comments
// (`let y = add(a, b)  # f32[B, S]`) so the text stays parseable and round-trips.
//
// The text follows docs/language.md: two-space indents; add/sub/mul/div/mod, the comparisons
// and logical_and/or with exactly two positional arguments print infix with the fewest
// parentheses, neg and logical_not as prefix `-` and `!`; `-1` is a literal and neg(1) prints
// `-(1)`; floats print in the shortest form that reads back exactly, always with a `.` or an
// exponent. A let-bound Var whose name is taken (by another Var, a symbol or a callee of the
// function) or is no identifier prints under a fresh name, since lets compare by position, not
// name; parameters keep theirs. In signatures, the anonymous symbols `_d0, _d1, ...` print as
// `?` in the order the front end names them.
//
// .dsc cannot spell infinities or NaNs: print_module/print_function/print_prim abort on one
// (internal_assert), while the single-node to_string overloads, meant for messages and
// debugging, spell them `inf`, `-inf` and `nan`.

#include <string>

#include "ir/Module.h"

namespace dsc::ir {

struct PrintOptions {
  bool show_inferred_types = true; // the trailing `# f32[...]` comments
};

std::string print_module(const Module& m, const PrintOptions& options = {});
std::string print_function(const Function& f, const PrintOptions& options = {});
std::string print_prim(const PrimFunc& p);
std::string print_extern(const ExternFunc& e);
std::string to_string(const Expr& e);
std::string to_string(const PrimExpr& e);
std::string to_string(const Stmt& s);

} // namespace dsc::ir
