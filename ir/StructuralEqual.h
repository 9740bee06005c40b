#pragma once
// Structural equality and hashing of IR, ignoring source locations and inferred types.
// Vars are compared by where they are bound (a parameter or binding in the same position),
// not by name; symbols by name; symbolic dims by node (hash-consed, so structurally).
//
// Details:
// - Declared types count: parameter types, return types and asserted `let` types. Parameter
//   names count too, since keyword arguments bind by them; let-bound names do not.
// - Imports compare by name only; a function's recorded ShapeFacts are ignored.
// - Literals compare by kind and exact bits (0.0 differs from -0.0).
// - Prims compare as their text reads: nested Seqs are flattened (`Seq([s])` equals `s`, an
//   absent else equals an empty one), a loop by its var, kind, min and printed end
//   (simplify(min + extent)), and i64 index arithmetic (Index, i64 IntImm, and + - * / % min
//   max neg over them) by the one symbolic expression it stands for.
// - structural_hash(a) == structural_hash(b) whenever structural_equal(a, b).

#include <cstddef>

#include "ir/Module.h"

namespace dsc::ir {

bool structural_equal(const Module& a, const Module& b);
bool structural_equal(const Function& a, const Function& b);
bool structural_equal(const PrimFunc& a, const PrimFunc& b);
bool structural_equal(const ExternFunc& a, const ExternFunc& b);
bool structural_equal(const PrimExpr& a, const PrimExpr& b);

size_t structural_hash(const Module& m);

} // namespace dsc::ir
