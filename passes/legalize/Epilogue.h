#pragma once
// A library product's epilogue (ir/LibraryRoutine.h): a map (or a stitched group, below)
// that reads the product only at its own index, rewritten to run on a block of rows of the
// product in place. The routine calls it on each block of rows as soon as the block is final,
// so the product is read back from cache, not memory, and the map needs no kernel and no
// buffer of its own.
//
// The map's index space [d0, ..., dn] becomes [R, dn]: R (a fresh symbol) is the block's row
// count and its leading dims fold into the row. An input read at the map's own row (its leading
// dims equal to the map's, read at its leading indices) is indexed by row and offset to the
// block by the routine: [R, dn] when read at the map's column (a residual), [R, 1] when its
// last dim is 1 (a value per row). Any other input is passed whole: one read at indices that use
// no leading index variable (a bias over the columns, a scalar) as it is, and one read at other
// rows (a mask indexed by the batch of a batch of products) at the row's position: the
// epilogue then takes the block's first row in a symbol of its own (the extern's `first_row`,
// ir/LibraryRoutine.h), and each leading index becomes a function of first_row + row (the
// position divided by the rows of the dims after it, modulo its extent). fuse
// (passes/legalize/Fuse.h) decides when a map may become an epilogue (the product has no other
// reader, the map covers it exactly); this file only rewrites it.

#include <memory>
#include <string>

#include "passes/legalize/ComputeDesc.h"
#include "passes/legalize/Context.h"

namespace dsc::passes::lowering {

// `map` (one output) as the epilogue of the product it reads through input buffer `product`,
// whose elements are `dtype`: a Map description over [R, N] whose one output is the product
// (read where it is written, so of the product's dtype),
// with the map's other inputs, whose args are the graph values passed to them. Null with `*why`
// set when the map reads anything in a way the routine cannot offset by rows.
std::shared_ptr<ComputeDesc> make_epilogue(const ComputeDesc& map, const std::string& product,
                                           ir::DType dtype, FnContext& ctx, std::string* why);

// A stitched group (its reductions over the product's last dim, row by row, and its result a
// map over the product's dims; softmax or layer_norm after a product) as the product's
// epilogue, rewritten the same way: its rows fold into R, each stage keeps its own column
// loop, and its inputs are read by row or whole. Only the last stage writes (the result, over
// the product, in place): every stage reads the product before that stage overwrites it, each
// element read then written by the same iteration. Null with `*why` set otherwise.
std::shared_ptr<ComputeDesc> make_stitched_epilogue(const ComputeDesc& group,
                                                    const std::string& product, ir::DType dtype,
                                                    FnContext& ctx, std::string* why);

} // namespace dsc::passes::lowering
