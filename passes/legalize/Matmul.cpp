// matmul. When the target offers a GEMM routine for the dtype (on f32 the one chosen,
// PassContext::gemm_routine, else the target's: dsc.sgemm on the CPU, cublas.sgemm on CUDA;
// dsc.gemm_bf16 and dsc.gemm_f16 on the CPU) and each operand has either the result's full
// batch or none (its batch dims absent or all 1), a library call of the routine, which
// the materializer makes a call to an extern whose signature is the two operand types and the
// result type: the host folds a's leading dims into m when b has no
// batch, and runs a strided batch otherwise. An operand whose batch dims are all 1 is first
// reshaped to rank 2 (an alias). Anything else (other dtypes, batch dims that broadcast
// against each other, rank-1 operands) is a reduction over the contracted dim:
// out[..., i, j] = sum_k a[..., i, k] * b[..., k, j], accumulated in f32 for f16/bf16.

#include "passes/legalize/DescBuilder.h"
#include "passes/legalize/Families.h"
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
  ir::Expr call = ir::Call::make(ir::op_name(ir::OpId::reshape), {x, ir::ShapeExpr::make(dims)}, {},
                                 mt, ctx.loc());
  std::string hint = x.is<ir::Var>() ? x.as<ir::Var>()->name + "_matrix" : "matrix";
  return ctx.insert_binding(hint, call, mt);
}

std::optional<ComputeDesc> blas(const ir::BoundArgs& args, const ir::Type& type, FnContext& ctx) {
  const ir::Type& at = args.types[0];
  const ir::Type& bt = args.types[1];
  const DType d = type.dtype;
  const ir::LibraryRoutine* routine =
      d == DType::F32 && ctx.pass().gemm_routine
          ? ctx.pass().gemm_routine
          : ctx.pass().target.preferred_routine(ir::RoutineRole::Matmul, d);
  if (!routine || !ctx.pass().target.offers(*routine)) return std::nullopt;
  if (at.dtype != d || bt.dtype != d || at.weak || bt.weak || at.rank() < 2 || bt.rank() < 2 ||
      !args[0].is<ir::Var>() || !args[1].is<ir::Var>())
    return std::nullopt;
  std::vector<sym::Expr> out_batch(type.shape.begin(), type.shape.end() - 2);
  std::vector<sym::Expr> ab = batch_of(at), bb = batch_of(bt);
  bool a_none = all_one(ab, ctx), b_none = all_one(bb, ctx);
  bool a_full = same_dims(ab, out_batch, ctx), b_full = same_dims(bb, out_batch, ctx);
  if (!(a_none || a_full) || !(b_none || b_full)) return std::nullopt;
  ir::Expr a = args[0], b = args[1];
  if (b_none) {
    if (bt.rank() > 2) b = matrix(b, ctx); // then every leading dim of a folds into m
  } else if (a_none) {
    if (at.rank() > 2) a = matrix(a, ctx); // a is shared by every batch (stride 0)
  }
  // Otherwise both have the full batch, which then has the same rank.
  ComputeDesc desc(NameSet(ctx.symbols()));
  desc.kind = ComputeDesc::Kind::Library;
  desc.op = ir::op_name(ir::OpId::matmul);
  desc.type = type;
  desc.library = LibraryCall{routine, {a, b}, nullptr, {}, std::nullopt, {}};
  return desc;
}

ComputeDesc reduction(const ir::BoundArgs& args, const ir::Type& type, FnContext& ctx) {
  DescBuilder db(ctx, ir::op_name(ir::OpId::matmul));
  Operand a = db.input(args[0], "a"), b = db.input(args[1], "b");
  db.output(type, "out");
  DType d = type.dtype;
  bool a_vec = args.types[0].rank() == 1, b_vec = args.types[1].rank() == 1;
  size_t out_batch = type.rank() - (a_vec ? 0 : 1) - (b_vec ? 0 : 1);
  Reduction r;
  r.identity = zero(compute_dtype(d));
  r.space = db.space(type.shape);
  r.accumulator = db.local_name("acc");
  r.reduced = db.space({args.types[0].shape.back()}, "k");
  const Indices& o = r.space.vars;
  const sym::Expr& k = r.reduced.vars[0];
  // The batch indices of an operand whose matrix dims are the last `matrix_rank` of its rank.
  auto batch_indices = [&](const Operand& x, size_t matrix_rank) {
    Indices idx;
    size_t xb = x.rank() - matrix_rank;
    for (size_t n = 0; n < xb; ++n)
      idx.push_back(ctx.is_one(x.shape[n]) ? sym::Expr(0) : o[out_batch - xb + n]);
    return idx;
  };
  Indices ai = batch_indices(a, a_vec ? 1 : 2);
  if (!a_vec) ai.push_back(o[out_batch]);
  ai.push_back(k);
  Indices bi = batch_indices(b, b_vec ? 1 : 2);
  bi.push_back(k);
  if (!b_vec) bi.push_back(o[type.rank() - 1]);
  r.body.value = binary(BinaryOp::Mul, db.read(a, ai, d), db.read(b, bi, d));
  return db.reduce(std::move(r), type);
}

// matmul_q as a call of the target's routine for its bits and x's dtype (dsc.gemm_q8 and
// dsc.gemm_q4 on the CPU, for f32 x and f16 scales), when it has one.
std::optional<ComputeDesc> quantized_library(const ir::BoundArgs& args, const ir::Type& type,
                                             FnContext& ctx) {
  const int64_t bits = std::get<int64_t>(args[3].as<ir::Literal>()->value);
  const ir::LibraryRoutine* routine = ctx.pass().target.preferred_routine(
      bits == 8 ? ir::RoutineRole::MatmulQ8 : ir::RoutineRole::MatmulQ4, type.dtype);
  if (!routine || !ctx.pass().target.offers(*routine)) return std::nullopt;
  for (size_t i = 0; i < 3; ++i)
    if (args.types[i].weak || !args[i].is<ir::Var>() ||
        args.types[i].dtype != ir::routine_buffer_dtype(*routine, i))
      return std::nullopt;
  ComputeDesc desc(NameSet(ctx.symbols()));
  desc.kind = ComputeDesc::Kind::Library;
  desc.op = ir::op_name(ir::OpId::matmul_q);
  desc.type = type;
  desc.library = LibraryCall{routine, {args[0], args[1], args[2]}, nullptr, {}, std::nullopt, {}};
  return desc;
}

// matmul_q as a reduction over K: out[..., n] = sum_k x[..., k] * q(n, k) * scales[n, k / group],
// each weight dequantized as it is read (ir/ops/Matmul.cpp has the format).
ComputeDesc quantized_reduction(const ir::BoundArgs& args, const ir::Type& type, FnContext& ctx) {
  DescBuilder db(ctx, ir::op_name(ir::OpId::matmul_q));
  Operand x = db.input(args[0], "x"), w = db.input(args[1], "w"), s = db.input(args[2], "scales");
  db.output(type, "out");
  const DType c = compute_dtype(type.dtype);
  const int64_t bits = std::get<int64_t>(args[3].as<ir::Literal>()->value);
  const sym::Expr k_dim = args.types[0].shape.back();
  const sym::Expr group = sym::floordiv(k_dim, args.types[2].shape[1]);
  Reduction r;
  r.identity = zero(c);
  r.space = db.space(type.shape);
  r.accumulator = db.local_name("acc");
  r.reduced = db.space({k_dim}, "k");
  const Indices& o = r.space.vars;
  const sym::Expr& k = r.reduced.vars[0];
  const sym::Expr& n = o.back();
  Indices xi(o.begin(), o.end() - 1);
  xi.push_back(k);
  ir::PrimExpr q;
  if (bits == 8) {
    q = convert(db.load(w, {n, k}), c);
  } else {
    // The byte's bits as 0..255, then its low nibble for even k, its high one for odd, less 8.
    ir::PrimExpr byte = convert(db.load(w, {n, sym::floordiv(k, 2)}), DType::I64);
    ir::PrimExpr u = select(binary(BinaryOp::LT, byte, int_imm(DType::I64, 0)),
                            binary(BinaryOp::Add, byte, int_imm(DType::I64, 256)), byte);
    ir::PrimExpr even = binary(BinaryOp::EQ, index(sym::floormod(k, 2)), int_imm(DType::I64, 0));
    ir::PrimExpr nibble = select(even, binary(BinaryOp::Mod, u, int_imm(DType::I64, 16)),
                                 binary(BinaryOp::Div, u, int_imm(DType::I64, 16)));
    q = convert(binary(BinaryOp::Sub, nibble, int_imm(DType::I64, 8)), c);
  }
  ir::PrimExpr scale = convert(db.read(s, {n, sym::floordiv(k, group)}, args.types[2].dtype), c);
  r.body.value = binary(BinaryOp::Mul, db.read(x, xi, type.dtype), binary(BinaryOp::Mul, q, scale));
  return db.reduce(std::move(r), type);
}

} // namespace

std::optional<ComputeDesc> describe_matmul(const ir::Call& call, const ir::BoundArgs& args,
                                           const ir::Type& type, FnContext& ctx) {
  if (ir::find_op(call.callee)->id == ir::OpId::matmul_q) {
    if (std::optional<ComputeDesc> library = quantized_library(args, type, ctx)) return library;
    return quantized_reduction(args, type, ctx);
  }
  if (std::optional<ComputeDesc> library = blas(args, type, ctx)) return library;
  return reduction(args, type, ctx);
}

} // namespace dsc::passes::lowering
