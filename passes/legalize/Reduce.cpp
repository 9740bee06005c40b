// Reductions: loops over the kept axes (in order) around a local accumulator, then loops over
// the reduced axes (in order), so that a reduction over the last axis is an inner loop over
// contiguous elements into a local (which vectorizes with vector accumulators). schedule
// moves a kept last axis inside when the reduced axes are not last.
//
// Accumulators: f32 for f16/bf16/f32 (the interpreter sums in f64; tests allow for it), f64
// for f64, the dtype itself for integers (wrapping, which gives the interpreter's low bits).
// mean is the sum divided by the element count. max and min start from -inf/+inf (the least
// and greatest integer) and use the prim's max/min, which on floats propagate NaN as the
// interpreter does (they may pick the other zero of -0.0 and 0.0) and vectorize as reductions.

#include <set>

#include "passes/legalize/Families.h"
#include "passes/legalize/LoopBuilder.h"

namespace dsc::passes::lowering {

namespace sym = symbolic;
using ir::BinaryOp;
using ir::DType;
using ir::PrimExpr;
using ir::Stmt;

ir::Expr lower_reduce(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                      FnContext& ctx) {
  const ir::OpId op = ir::find_op(call.callee)->id;
  const ir::Type& xt = args.types[0];
  size_t rank = xt.rank();
  std::set<size_t> axes;
  if (!args[1].defined()) {
    for (size_t i = 0; i < rank; ++i)
      axes.insert(i);
  } else {
    std::vector<int64_t> written;
    if (const ir::ShapeExpr* s = args[1].as<ir::ShapeExpr>()) {
      for (const sym::Expr& d : s->dims) {
        const sym::Const* c = d.as<sym::Const>();
        internal_assert(c) << "legalize: a non-constant axis of " << call.callee;
        written.push_back(c->value);
      }
    } else {
      written.push_back(std::get<int64_t>(args[1].as<ir::Literal>()->value));
    }
    for (int64_t a : written)
      axes.insert(static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a));
  }
  bool keepdims = std::get<bool>(args[2].as<ir::Literal>()->value);

  PrimBuilder pb(ctx, call.callee);
  Operand x = pb.input(args[0], "x");
  Operand out = pb.output(type, "out");
  DType d = type.dtype; // mean of a weak integer literal is f32
  DType acc_dtype = compute_dtype(d);

  std::vector<sym::Expr> kept_extents, reduced_extents;
  sym::Expr count(1);
  for (size_t i = 0; i < rank; ++i) {
    if (axes.count(i)) {
      reduced_extents.push_back(xt.shape[i]);
      count = count * xt.shape[i];
    } else {
      kept_extents.push_back(xt.shape[i]);
    }
  }

  PrimExpr init;
  if (op == ir::OpId::sum || op == ir::OpId::mean)
    init = zero(acc_dtype);
  else if (ir::is_float(acc_dtype))
    init = op == ir::OpId::max ? neg_infinity(acc_dtype) : infinity(acc_dtype);
  else
    init = op == ir::OpId::max ? int_lowest(acc_dtype) : int_highest(acc_dtype);

  Stmt body = pb.loops(kept_extents, [&](const PrimBuilder::Indices& kept) {
    std::string acc;
    Stmt decl = pb.var("acc", init, &acc);
    PrimExpr acc_ref = ir::LocalRef::make(acc_dtype, acc);
    Stmt reduce = pb.loops(
        reduced_extents,
        [&](const PrimBuilder::Indices& red) {
          PrimBuilder::Indices idx;
          size_t k = 0, r = 0;
          for (size_t i = 0; i < rank; ++i)
            idx.push_back(axes.count(i) ? red[r++] : kept[k++]);
          PrimExpr v = pb.read(x, idx, d);
          BinaryOp combine = op == ir::OpId::sum || op == ir::OpId::mean ? BinaryOp::Add
                             : op == ir::OpId::max               ? BinaryOp::Max
                                                         : BinaryOp::Min;
          return ir::Assign::make(acc, binary(combine, acc_ref, v));
        },
        "r");
    PrimExpr result = acc_ref;
    if (op == ir::OpId::mean) result = binary(BinaryOp::Div, acc_ref, convert(index(count), acc_dtype));
    PrimBuilder::Indices out_idx;
    size_t k = 0;
    for (size_t i = 0; i < rank; ++i) {
      if (!axes.count(i))
        out_idx.push_back(kept[k++]);
      else if (keepdims)
        out_idx.push_back(sym::Expr(0));
    }
    return ir::Seq::make({decl, reduce, pb.write(out, out_idx, result)});
  });
  return pb.finish(body, type);
}

} // namespace dsc::passes::lowering
