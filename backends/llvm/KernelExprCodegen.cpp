// Expressions, buffer access and casts of kernels (KernelCodegen.h has the semantics).

#include <llvm/ADT/APFloat.h>
#include <llvm/IR/Intrinsics.h>

#include "backends/llvm/FloatConversion.h"
#include "backends/llvm/KernelEmitter.h"
#include "backends/llvm/MathFunctions.h"
#include "backends/llvm/SymbolicCodegen.h"
#include "ir/Intrinsics.h"

namespace dsc::llvmgen {

namespace {

bool is_half(ir::DType d) { return d == ir::DType::F16 || d == ir::DType::BF16; }

// Rounds a float register value to the precision of f16 or bf16 (the value stays a float).
llvm::Value* round_to(llvm::IRBuilder<>& b, llvm::Value* f, ir::DType d) {
  if (d == ir::DType::F16) return emit_f16_to_f32(b, emit_f32_to_f16(b, f));
  return emit_bf16_to_f32(b, emit_f32_to_bf16(b, f));
}

} // namespace

llvm::Value* KernelEmitter::emit_expr(const ir::PrimExpr& e) {
  switch (e.kind()) {
  case ir::NodeKind::IntImm: {
    const auto* imm = e.as<ir::IntImm>();
    return llvm::ConstantInt::get(register_type(ctx_, imm->dtype), static_cast<uint64_t>(imm->value), true);
  }
  case ir::NodeKind::FloatImm: {
    const auto* imm = e.as<ir::FloatImm>();
    return emit_constant(imm->dtype, imm->value);
  }
  case ir::NodeKind::Index: // an i64 value computed in the index type
    return b_.CreateSExt(index(e.as<ir::Index>()->value), register_type(ctx_, e->dtype));
  case ir::NodeKind::Load:
    return emit_load(*e.as<ir::Load>());
  case ir::NodeKind::LocalRef: {
    const auto* ref = e.as<ir::LocalRef>();
    auto it = frame_.locals.find(ref->name);
    internal_assert(it != frame_.locals.end()) << "unknown local '" << ref->name << "'";
    return b_.CreateLoad(it->second.slot->getAllocatedType(), it->second.slot, ref->name);
  }
  case ir::NodeKind::PrimBinary:
    return emit_binary(*e.as<ir::PrimBinary>());
  case ir::NodeKind::Intrinsic:
    return emit_intrinsic(*e.as<ir::Intrinsic>());
  case ir::NodeKind::Cast: {
    const auto* c = e.as<ir::Cast>();
    return emit_cast(emit_expr(c->value), c->value->dtype, c->dtype);
  }
  default:
    internal_error << "unexpected expression " << ir::node_kind_name(e.kind());
  }
}

llvm::Value* KernelEmitter::emit_constant(ir::DType d, double value) {
  if (!ir::is_float(d)) {
    if (d == ir::DType::Bool) return b_.getInt1(value != 0.0);
    return llvm::ConstantInt::get(register_type(ctx_, d), static_cast<uint64_t>(static_cast<int64_t>(value)), true);
  }
  if (d == ir::DType::F64) return llvm::ConstantFP::get(b_.getDoubleTy(), value);
  // Through f32 first, as stores of computed values round.
  llvm::APFloat v(static_cast<float>(value));
  if (is_half(d)) {
    bool lost = false;
    v.convert(d == ir::DType::F16 ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat(),
              llvm::APFloat::rmNearestTiesToEven, &lost);
    v.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
  }
  return llvm::ConstantFP::get(ctx_, v);
}

llvm::Value* KernelEmitter::emit_binary(const ir::PrimBinary& e) {
  using ir::BinaryOp;
  const ir::DType d = e.a->dtype;
  llvm::Value* x = emit_expr(e.a);
  llvm::Value* y = emit_expr(e.b);
  if (ir::is_float(d)) {
    switch (e.op) {
    case BinaryOp::Add:
      return b_.CreateFAdd(x, y);
    case BinaryOp::Sub:
      return b_.CreateFSub(x, y);
    case BinaryOp::Mul:
      return b_.CreateFMul(x, y);
    case BinaryOp::Div: {
      // A quotient may be a product with the divisor's reciprocal (`arcp`): LLVM then divides
      // once per loop by a divisor the loop does not change (softmax's sum, layer norm's
      // count) and multiplies per element, about one rounding more than the quotient.
      llvm::Value* q = b_.CreateFDiv(x, y);
      if (auto* op = llvm::dyn_cast<llvm::Instruction>(q)) op->setHasAllowReciprocal(true);
      return q;
    }
    case BinaryOp::Min:
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, y);
    case BinaryOp::Max:
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, y);
    case BinaryOp::EQ:
      return b_.CreateFCmpOEQ(x, y);
    case BinaryOp::NE:
      return b_.CreateFCmpUNE(x, y);
    case BinaryOp::LT:
      return b_.CreateFCmpOLT(x, y);
    case BinaryOp::LE:
      return b_.CreateFCmpOLE(x, y);
    case BinaryOp::GT:
      return b_.CreateFCmpOGT(x, y);
    case BinaryOp::GE:
      return b_.CreateFCmpOGE(x, y);
    default:
      internal_error << "'" << ir::binary_op_name(e.op) << "' on floats";
    }
  }
  // Bools compare as unsigned 0 < 1; the integer dtypes as signed.
  const bool is_bool = d == ir::DType::Bool;
  switch (e.op) {
  case BinaryOp::Add:
    return b_.CreateAdd(x, y);
  case BinaryOp::Sub:
    return b_.CreateSub(x, y);
  case BinaryOp::Mul:
    return b_.CreateMul(x, y);
  case BinaryOp::Div:
    return emit_floordiv(b_, x, y);
  case BinaryOp::Mod:
    return emit_floormod(b_, x, y);
  case BinaryOp::Min:
    return b_.CreateBinaryIntrinsic(is_bool ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, x, y);
  case BinaryOp::Max:
    return b_.CreateBinaryIntrinsic(is_bool ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, x, y);
  case BinaryOp::EQ:
    return b_.CreateICmpEQ(x, y);
  case BinaryOp::NE:
    return b_.CreateICmpNE(x, y);
  case BinaryOp::LT:
    return is_bool ? b_.CreateICmpULT(x, y) : b_.CreateICmpSLT(x, y);
  case BinaryOp::LE:
    return is_bool ? b_.CreateICmpULE(x, y) : b_.CreateICmpSLE(x, y);
  case BinaryOp::GT:
    return is_bool ? b_.CreateICmpUGT(x, y) : b_.CreateICmpSGT(x, y);
  case BinaryOp::GE:
    return is_bool ? b_.CreateICmpUGE(x, y) : b_.CreateICmpSGE(x, y);
  case BinaryOp::And:
    return b_.CreateAnd(x, y);
  case BinaryOp::Or:
    return b_.CreateOr(x, y);
  }
  internal_error << "unknown binary op";
}

llvm::Value* KernelEmitter::emit_intrinsic(const ir::Intrinsic& e) {
  const ir::IntrinsicDef* fn = ir::find_intrinsic(e.name);
  internal_assert(fn && fn->pure()) << "no intrinsic '" << e.name << "' has a value";
  internal_assert(e.args.size() == static_cast<size_t>(fn->arity))
      << "'" << e.name << "' takes " << fn->arity << " arguments";
  std::vector<llvm::Value*> args;
  for (const ir::PrimExpr& a : e.args)
    args.push_back(emit_expr(a));
  const ir::DType d = e.dtype;
  using ir::IntrinsicId;
  switch (fn->cpu) {
  case ir::CpuLowering::Polynomial:
    if (!ir::is_float(d)) {
      internal_assert(fn->id == IntrinsicId::pow) << "'" << e.name << "' on " << ir::dtype_name(d);
      auto* t = llvm::cast<llvm::IntegerType>(register_type(ctx_, d));
      return b_.CreateCall(get_integer_pow_function(module_, t), args);
    }
    return b_.CreateCall(get_math_function(module_, *fn, register_type(ctx_, d),
                                           [this](llvm::IRBuilder<>& b, const ir::IntrinsicDef& f,
                                                  const std::vector<llvm::Value*>& a) {
                                             return target_.call_math_library(b, f, a);
                                           }),
                         args);
  case ir::CpuLowering::LlvmIntrinsic: {
    internal_assert(ir::is_float(d)) << "'" << e.name << "' on " << ir::dtype_name(d);
    llvm::Intrinsic::ID id = llvm::Function::lookupIntrinsicID(fn->llvm);
    internal_assert(id != llvm::Intrinsic::not_intrinsic) << "no LLVM intrinsic " << fn->llvm;
    return b_.CreateIntrinsic(id, {args[0]->getType()}, args);
  }
  case ir::CpuLowering::Inline:
    break;
  case ir::CpuLowering::Nothing:
    internal_error << "'" << e.name << "' has no value";
  }
  switch (fn->id) {
  case IntrinsicId::rsqrt: {
    llvm::Value* s = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]);
    return b_.CreateFDiv(llvm::ConstantFP::get(s->getType(), 1.0), s);
  }
  case IntrinsicId::abs:
    if (ir::is_float(d)) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, args[0]);
    if (d == ir::DType::Bool) return args[0];
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, args[0], b_.getFalse());
  case IntrinsicId::neg:
    return ir::is_float(d) ? b_.CreateFNeg(args[0]) : b_.CreateNeg(args[0]);
  case IntrinsicId::select:
    return b_.CreateSelect(args[0], args[1], args[2]);
  case IntrinsicId::logical_not:
    return b_.CreateNot(args[0]);
  default:
    internal_error << "no inline code for '" << e.name << "'";
  }
}

llvm::Value* KernelEmitter::emit_cast(llvm::Value* v, ir::DType from, ir::DType to) {
  if (from == to) return v;
  llvm::Type* target = register_type(ctx_, to);
  if (to == ir::DType::Bool) {
    if (ir::is_float(from)) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from == ir::DType::Bool) return ir::is_float(to) ? b_.CreateUIToFP(v, target) : b_.CreateZExt(v, target);
  if (ir::is_float(from) && ir::is_float(to)) {
    if (to == ir::DType::F64) return b_.CreateFPExt(v, target); // f16/bf16/f32 -> f64 is exact
    llvm::Value* f = from == ir::DType::F64 ? b_.CreateFPTrunc(v, target) : v;
    return is_half(to) ? round_to(b_, f, to) : f; // f16 -> f32 is a no-op
  }
  if (ir::is_float(from)) {
    // Saturating through i64, NaN -> 0, then wrapping to narrower integers.
    llvm::Value* wide = b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b_.getInt64Ty(), v->getType()}, {v});
    return b_.CreateTrunc(wide, target);
  }
  if (ir::is_float(to)) {
    llvm::Value* f = b_.CreateSIToFP(v, target);
    return is_half(to) ? round_to(b_, f, to) : f;
  }
  return b_.CreateSExtOrTrunc(v, target);
}

llvm::Value* KernelEmitter::element_address(const std::string& buffer, const std::vector<ir::PrimExpr>& indices) {
  auto it = frame_.buffers.find(buffer);
  internal_assert(it != frame_.buffers.end()) << "unknown buffer '" << buffer << "'";
  const BufferInfo& info = it->second;
  internal_assert(indices.size() == info.strides.size()) << "buffer '" << buffer << "' indexed with the wrong rank";
  llvm::Value* offset = nullptr;
  for (size_t k = 0; k < indices.size(); ++k) {
    llvm::Value* i = b_.CreateSExtOrTrunc(emit_expr(indices[k]), index_type_);
    llvm::Value* term = b_.CreateMul(i, info.strides[k], "", false, true);
    offset = offset ? b_.CreateAdd(offset, term, "", false, true) : term;
  }
  if (!offset) return info.data;
  return b_.CreateInBoundsGEP(memory_type(ctx_, info.dtype), info.data, offset, buffer + ".addr");
}

void KernelEmitter::tag_access(llvm::Instruction* access, const std::string& buffer) {
  auto it = alias_.find(buffer);
  if (it == alias_.end()) return;
  access->setMetadata(llvm::LLVMContext::MD_alias_scope, it->second.first);
  if (it->second.second) access->setMetadata(llvm::LLVMContext::MD_noalias, it->second.second);
}

llvm::Value* KernelEmitter::emit_load(const ir::Load& e) {
  llvm::Value* addr = element_address(e.buffer, e.indices);
  const ir::DType d = frame_.buffers.at(e.buffer).dtype;
  llvm::LoadInst* raw = b_.CreateAlignedLoad(memory_type(ctx_, d), addr, llvm::Align(dtype_bytes(d)), e.buffer);
  tag_access(raw, e.buffer);
  switch (d) {
  case ir::DType::Bool:
    return b_.CreateICmpNE(raw, b_.getInt8(0));
  case ir::DType::F16:
    return emit_f16_to_f32(b_, raw);
  case ir::DType::BF16:
    return emit_bf16_to_f32(b_, raw);
  default:
    return raw;
  }
}

void KernelEmitter::emit_store(const ir::Store& s) {
  auto it = frame_.buffers.find(s.buffer);
  internal_assert(it != frame_.buffers.end()) << "unknown buffer '" << s.buffer << "'";
  const ir::DType d = it->second.dtype;
  llvm::Value* v = emit_expr(s.value);
  // A store rounds f16/bf16 once; the value is converted first when its dtype differs.
  if (s.value->dtype != d && !(is_half(d) && ir::is_float(s.value->dtype) && s.value->dtype != ir::DType::F64))
    v = emit_cast(v, s.value->dtype, d);
  switch (d) {
  case ir::DType::Bool:
    v = b_.CreateZExt(v, b_.getInt8Ty());
    break;
  case ir::DType::F16:
    v = emit_f32_to_f16(b_, v);
    break;
  case ir::DType::BF16:
    v = emit_f32_to_bf16(b_, v);
    break;
  default:
    break;
  }
  llvm::Value* addr = element_address(s.buffer, s.indices);
  llvm::StoreInst* st = b_.CreateAlignedStore(v, addr, llvm::Align(dtype_bytes(d)));
  tag_access(st, s.buffer);
}

} // namespace dsc::llvmgen
