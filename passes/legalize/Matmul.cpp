// matmul. On f32, when each operand has either the result's full batch or none (its batch
// dims absent or all 1), a call to an extern bound to "blas.sgemm" whose signature is the two
// operand types and the result type: the host folds a's leading dims into m when b has no
// batch, and runs a strided batch otherwise. An operand whose batch dims are all 1 is first
// reshaped to rank 2 (an alias). Anything else (other dtypes, batch dims that broadcast
// against each other, rank-1 operands) is a loop nest over the result with an accumulator
// over the contracted dim, in f32 for f16/bf16.

#include "passes/legalize/Families.h"
#include "passes/legalize/LoopBuilder.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace {

std::vector<sym::Expr> batch_of(const ir::Type& t) {
  return std::vector<sym::Expr>(t.shape.begin(), t.shape.end() - 2);
}

bool all_one(const std::vector<sym::Expr>& dims, FnContext& ctx) {
  for (const sym::Expr& d : dims)
    if (!ctx.is_one(d)) return false;
  return true;
}

bool same_dims(const std::vector<sym::Expr>& a, const std::vector<sym::Expr>& b, FnContext& ctx) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!ctx.equal(a[i], b[i])) return false;
  return true;
}

// `x` reshaped to its last two dims, as a binding inserted before the matmul.
ir::Expr matrix(const ir::Expr& x, FnContext& ctx) {
  const ir::Type& t = x->type;
  std::vector<sym::Expr> dims(t.shape.end() - 2, t.shape.end());
  ir::Type mt = ir::Type::tensor(t.dtype, dims);
  ir::Expr call = ir::Call::make(ir::op_name(ir::OpId::reshape), {x, ir::ShapeExpr::make(dims)},
                                 {}, mt, ctx.loc());
  std::string hint = x.is<ir::Var>() ? x.as<ir::Var>()->name + "_matrix" : "matrix";
  return ctx.insert_binding(hint, call, mt);
}

ir::Expr blas(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
              FnContext& ctx) {
  const ir::Type& at = args.types[0];
  const ir::Type& bt = args.types[1];
  if (!ctx.pass().target.offers("blas.sgemm")) return ir::Expr();
  if (type.dtype != DType::F32 || at.weak || bt.weak || at.rank() < 2 || bt.rank() < 2 ||
      !args[0].is<ir::Var>() || !args[1].is<ir::Var>())
    return ir::Expr();
  std::vector<sym::Expr> out_batch(type.shape.begin(), type.shape.end() - 2);
  std::vector<sym::Expr> ab = batch_of(at), bb = batch_of(bt);
  bool a_none = all_one(ab, ctx), b_none = all_one(bb, ctx);
  bool a_full = same_dims(ab, out_batch, ctx), b_full = same_dims(bb, out_batch, ctx);
  if (!(a_none || a_full) || !(b_none || b_full)) return ir::Expr();
  ir::Expr a = args[0], b = args[1];
  if (b_none) {
    if (bt.rank() > 2) b = matrix(b, ctx); // then every leading dim of a folds into m
  } else if (a_none) {
    if (at.rank() > 2) a = matrix(a, ctx); // a is shared by every batch (stride 0)
  }
  // Otherwise both have the full batch, which then has the same rank.
  std::string name = ctx.sgemm(a->type, b->type, type);
  return ir::Call::make(name, {a, b}, {}, type, call.loc);
}

ir::Expr loop_nest(const ir::BoundArgs& args, const ir::Type& type, FnContext& ctx) {
  PrimBuilder pb(ctx, "matmul");
  Operand a = pb.input(args[0], "a"), b = pb.input(args[1], "b");
  Operand out = pb.output(type, "out");
  DType d = type.dtype;
  DType acc_dtype = compute_dtype(d);
  bool a_vec = args.types[0].rank() == 1, b_vec = args.types[1].rank() == 1;
  const ir::Type& at = args.types[0];
  sym::Expr k_extent = at.shape.back();
  size_t out_batch = type.rank() - (a_vec ? 0 : 1) - (b_vec ? 0 : 1);
  // The batch indices of an operand whose matrix dims are the last `matrix_rank` of its rank.
  auto batch_indices = [&](const Operand& x, size_t matrix_rank, const Indices& o) {
    Indices idx;
    size_t xb = x.rank() - matrix_rank;
    for (size_t k = 0; k < xb; ++k)
      idx.push_back(ctx.is_one(x.shape[k]) ? sym::Expr(0) : o[out_batch - xb + k]);
    return idx;
  };
  Stmt body = pb.loops(type.shape, [&](const Indices& o) {
    sym::Expr i = a_vec ? sym::Expr(0) : o[out_batch];
    sym::Expr j = b_vec ? sym::Expr(0) : o[type.rank() - 1];
    std::string acc;
    Stmt decl = pb.var("acc", zero(acc_dtype), &acc);
    PrimExpr acc_ref = ir::LocalRef::make(acc_dtype, acc);
    Stmt reduce = pb.loops(
        {k_extent},
        [&](const Indices& r) {
          Indices ai = batch_indices(a, a_vec ? 1 : 2, o);
          if (!a_vec) ai.push_back(i);
          ai.push_back(r[0]);
          Indices bi = batch_indices(b, b_vec ? 1 : 2, o);
          bi.push_back(r[0]);
          if (!b_vec) bi.push_back(j);
          PrimExpr prod = binary(BinaryOp::Mul, pb.read(a, ai, d), pb.read(b, bi, d));
          return ir::Assign::make(acc, binary(BinaryOp::Add, acc_ref, prod));
        },
        "k");
    return ir::Seq::make({decl, reduce, pb.write(out, o, acc_ref)});
  });
  return pb.finish(body, type);
}

} // namespace

ir::Expr lower_matmul(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                      FnContext& ctx) {
  if (ir::Expr e = blas(call, args, type, ctx); e.defined()) return e;
  return loop_nest(args, type, ctx);
}

} // namespace dsc::passes::lowering
