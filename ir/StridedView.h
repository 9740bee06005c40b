#pragma once
// A strided view: how a library routine reads a buffer in place. The buffer, whatever its own
// shape, is read as a tensor of `shape` whose element (i0, ..., in) is element
// offset + i0 * strides[0] + ... + in * strides[n] of the buffer in row-major order (strides
// and offset in elements). A permuted, reshaped or split operand of a matmul is read this way
// with no copy: `qkv: f32[B, S, 2304] as [B, 12, S, 64] strides [2304*S, 64, 2304, 1] offset 768`
// is the keys of the second third of a fused QKV product, head by head.
//
// An extern's parameter may carry one (ExternFunc::views) when its routine reads views
// (LibraryRoutine::views); the routine's scalar arguments then come from the view.

#include <optional>
#include <string>
#include <vector>

#include "symbolic/Expr.h"

namespace dsc::ir {

struct Type;

struct StridedView {
  std::vector<symbolic::Expr> shape;
  std::vector<symbolic::Expr> strides;
  symbolic::Expr offset;
};

// A buffer of `shape` read as itself: row-major strides, offset 0.
StridedView dense_view(const std::vector<symbolic::Expr>& shape);

// The last element the view reads, offset + sum (shape[k] - 1) * strides[k] (simplified).
symbolic::Expr last_element(const StridedView& v);

// Why `v` cannot view a buffer of type `buffer`, or empty when it can: as many strides as dims,
// a tensor buffer. Whether the view stays inside the buffer is a shape fact
// (last_element < elements of the buffer), checked where the shapes are known.
std::string view_mismatch(const StridedView& v, const Type& buffer);

// Why `v` does not lay a tensor over every element of a buffer of type `buffer` exactly once,
// as a permutation of the buffer's dims, or empty when it does: offset 0, and each dim of the
// view (but those of extent 1) is a dim of the buffer of the same extent, stepped at that
// dim's row-major stride, each buffer dim (but those of extent 1) taken once. A result written
// through a view must be one, so that every element of the result is written.
std::string permutation_mismatch(const StridedView& v, const Type& buffer);

// Whether two views are the same expressions (the hash-consed dims, not their printed text).
bool same_view(const StridedView& a, const StridedView& b);

// `as [..] strides [..] offset X`, as an extern's parameter prints it.
std::string view_text(const StridedView& v);

} // namespace dsc::ir
