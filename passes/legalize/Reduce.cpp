// Reductions: a Reduction whose output index space is the result's (the kept axes in order,
// reduced ones held at 0 under keepdims) and whose reduced axes are in order, so that the
// materialized reduction over the last axis is an inner loop over contiguous elements into a
// local (which vectorizes with vector accumulators). schedule moves a kept last axis inside
// when the reduced axes are not last.
//
// Accumulators: f32 for f16/bf16/f32 (the interpreter sums in f64; tests allow for it), f64
// for f64, the dtype itself for integers (wrapping, which gives the interpreter's low bits).
// mean is the sum divided by the element count. max and min start from -inf/+inf (the least
// and greatest integer) and use the prim's max/min, which on floats propagate NaN as the
// interpreter does (they may pick the other zero of -0.0 and 0.0) and vectorize as reductions.
//
// argmax and argmin are two reductions stitched over the rows (the output space): the row's
// max (min), then the least index whose element equals it. Since max and min propagate NaN,
// a row with a NaN has a NaN extreme, which no element equals; the index is then the first
// NaN's, as in NumPy, by counting a NaN as a hit. Each is a plain reduction through max or min,
// so both vectorize on the CPU and combine over a block's threads on CUDA, at the price of
// reading the row twice.

#include <set>

#include "passes/legalize/DescBuilder.h"
#include "passes/legalize/Families.h"

namespace dsc::passes::lowering {

namespace {

ComputeDesc describe_arg_reduce(const ir::Call& call, const ir::BoundArgs& args,
                                const ir::Type& type, FnContext& ctx) {
  const bool greatest = ir::find_op(call.callee)->id == ir::OpId::argmax;
  const ir::Type& xt = args.types[0];
  size_t rank = xt.rank();
  int64_t written = std::get<int64_t>(args[1].as<ir::Literal>()->value);
  size_t axis = static_cast<size_t>(written < 0 ? written + static_cast<int64_t>(rank) : written);
  bool keepdims = std::get<bool>(args[2].as<ir::Literal>()->value);

  DescBuilder db(ctx, call.callee);
  Operand x = db.input(args[0], "x");
  db.output(type, "out");
  DType d = xt.dtype;
  DType acc_dtype = compute_dtype(d);
  Stitch st;
  st.rows = db.space(type.shape);
  // x's element at the row's indices, `reduced` at the axis.
  auto element_at = [&](const IndexSpace& reduced) {
    Indices idx;
    size_t o = 0;
    for (size_t i = 0; i < rank; ++i) {
      if (i == axis) {
        idx.push_back(reduced.vars[0]);
        if (keepdims) ++o;
      } else {
        idx.push_back(st.rows.vars[o++]);
      }
    }
    return db.read(x, idx, d);
  };

  Stage extreme;
  extreme.kind = Stage::Kind::Reduce;
  Reduction& e = extreme.reduction;
  e.space = st.rows;
  e.reduced = db.space({xt.shape[axis]}, "r");
  e.combiner = greatest ? BinaryOp::Max : BinaryOp::Min;
  if (ir::is_float(acc_dtype))
    e.identity = greatest ? neg_infinity(acc_dtype) : infinity(acc_dtype);
  else
    e.identity = greatest ? int_lowest(acc_dtype) : int_highest(acc_dtype);
  e.accumulator = db.local_name("acc");
  e.body.value = element_at(e.reduced);
  extreme.local = db.local_name(greatest ? "row_max" : "row_min");

  // A variable of its own: a costly producer fused into both stages would be computed twice
  // per element, which fusion refuses when it sees two indices.
  Stage first;
  first.kind = Stage::Kind::Reduce;
  Reduction& f = first.reduction;
  f.space = st.rows;
  f.reduced = db.space({xt.shape[axis]}, "k");
  f.combiner = BinaryOp::Min;
  f.identity = int_highest(DType::I64);
  f.accumulator = db.local_name("arg");
  PrimExpr v = db.let(f.body, "v", element_at(f.reduced));
  PrimExpr hit = binary(BinaryOp::EQ, v, ir::LocalRef::make(acc_dtype, extreme.local));
  if (ir::is_float(acc_dtype)) hit = binary(BinaryOp::Or, hit, is_nan(v));
  f.body.value = select(hit, index(f.reduced.vars[0]), int_highest(DType::I64));
  first.local = db.local_name("first");
  first.output = 0;

  st.stages.push_back(std::move(extreme));
  st.stages.push_back(std::move(first));
  return db.stitch(std::move(st), type);
}

} // namespace

std::optional<ComputeDesc> describe_reduce(const ir::Call& call, const ir::BoundArgs& args,
                                           const ir::Type& type, FnContext& ctx) {
  const ir::OpId op = ir::find_op(call.callee)->id;
  if (op == ir::OpId::argmax || op == ir::OpId::argmin)
    return describe_arg_reduce(call, args, type, ctx);
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

  DescBuilder db(ctx, call.callee);
  Operand x = db.input(args[0], "x");
  db.output(type, "out");
  DType d = type.dtype; // mean of a weak integer literal is f32
  DType acc_dtype = compute_dtype(d);

  std::vector<sym::Expr> reduced_extents;
  sym::Expr count(1);
  for (size_t i = 0; i < rank; ++i) {
    if (!axes.count(i)) continue;
    reduced_extents.push_back(xt.shape[i]);
    count = count * xt.shape[i];
  }

  Reduction r;
  if (op == ir::OpId::sum || op == ir::OpId::mean)
    r.identity = zero(acc_dtype);
  else if (ir::is_float(acc_dtype))
    r.identity = op == ir::OpId::max ? neg_infinity(acc_dtype) : infinity(acc_dtype);
  else
    r.identity = op == ir::OpId::max ? int_lowest(acc_dtype) : int_highest(acc_dtype);
  r.combiner = op == ir::OpId::sum || op == ir::OpId::mean ? BinaryOp::Add
               : op == ir::OpId::max                       ? BinaryOp::Max
                                                           : BinaryOp::Min;
  r.space = db.space(type.shape);
  r.accumulator = db.local_name("acc");
  r.reduced = db.space(reduced_extents, "r");
  // x's index: the output's variable for a kept axis (skipping the reduced ones the output
  // keeps as 1s), the reduced variable for a reduced one.
  Indices idx;
  size_t o = 0, k = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (axes.count(i)) {
      idx.push_back(r.reduced.vars[k++]);
      if (keepdims) ++o;
    } else {
      idx.push_back(r.space.vars[o++]);
    }
  }
  r.body.value = db.read(x, idx, d);
  if (op == ir::OpId::mean) {
    PrimExpr acc = ir::LocalRef::make(acc_dtype, r.accumulator);
    r.finish = binary(BinaryOp::Div, acc, convert(index(count), acc_dtype));
  }
  return db.reduce(std::move(r), type);
}

} // namespace dsc::passes::lowering
