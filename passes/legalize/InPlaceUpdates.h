#pragma once
// Which update_slice calls write into their operand's buffer instead of a copy of it.
//
// Every graph value is pure: update_slice(dst, src, axis, start) is dst with a slice replaced.
// Copying dst for that (a decode step's whole KV cache, to append one position) is what
// writing in place avoids. An update may write into dst's buffer when nothing else can see
// that buffer change:
//   - dst is read by nothing else in the fn (the update is its only use, in any block; the
//     update's result may be read by anything, since that runs after it), and
//   - dst is a parameter of the entry whose updated value the entry returns, through a chain
//     of such updates (the caller's buffer is then updated, and that output is the caller's
//     buffer: lower_host makes it no copy, and the manifest says which parameter it is), or
//     dst is the result of another update written in place (the next link of such a chain).
// Only the fn's own body qualifies (not an if's branch or a loop's body), and only while it
// is compiled once (not as guarded variants, where the result is copied out of a branch).
// Every other update_slice is a copy: a map over dst's elements (passes/legalize/Layout.cpp).

#include <set>
#include <vector>

#include "ir/IR.h"

namespace dsc::passes::lowering {

// The vars of `body`'s bindings whose update_slice writes in place; `params` are the entry's.
std::set<const ir::Var*> in_place_updates(const ir::Block& body, const std::vector<ir::VarRef>& params);

} // namespace dsc::passes::lowering
