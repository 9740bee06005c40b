#include "backends/llvm/SymbolicCodegen.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "support/Assert.h"

namespace dsc::llvmgen {

namespace {

llvm::ConstantInt* constant_divisor(llvm::Value* v) { return llvm::dyn_cast<llvm::ConstantInt>(v); }

// q = x sdiv d and r = x srem d for a divisor that is neither 0 nor -1, then the floor
// correction: when r != 0 and r's sign differs from d's, q -= 1 and r += d.
struct DivRem {
  llvm::Value* q;
  llvm::Value* r;
  llvm::Value* adjust; // i1: the floor correction applies
};

DivRem floor_divrem(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* d) {
  llvm::Value* q = b.CreateSDiv(x, d);
  llvm::Value* r = b.CreateSRem(x, d);
  llvm::Value* zero = llvm::ConstantInt::get(x->getType(), 0);
  llvm::Value* adjust;
  if (llvm::ConstantInt* c = constant_divisor(d)) {
    // The sign of d is known: r needs fixing exactly when it has the other sign.
    adjust = c->isNegative() ? b.CreateICmpSGT(r, zero) : b.CreateICmpSLT(r, zero);
  } else {
    llvm::Value* nonzero = b.CreateICmpNE(r, zero);
    llvm::Value* signs_differ = b.CreateICmpSLT(b.CreateXor(r, d), zero);
    adjust = b.CreateAnd(nonzero, signs_differ);
  }
  return {q, r, adjust};
}

// The divisor made safe for sdiv/srem: 1 where it is 0 or -1 (those are answered apart).
llvm::Value* safe_divisor(llvm::IRBuilder<>& b, llvm::Value* y) {
  llvm::Type* t = y->getType();
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  // y == 0 or y == -1  <=>  (y + 1) unsigned<= 1
  llvm::Value* special = b.CreateICmpULE(b.CreateAdd(y, one), one);
  return b.CreateSelect(special, one, y);
}

class Emitter {
public:
  Emitter(llvm::IRBuilder<>& b, const SymbolLookup& symbol, const SymbolicOptions& options)
      : b_(b), symbol_(symbol), options_(options),
        int_(options.type ? options.type : b.getInt64Ty()) {}

  // Integer-valued expressions as int_, booleans as i1.
  llvm::Value* emit(const symbolic::Expr& e) {
    using symbolic::ExprKind;
    switch (e.kind()) {
    case ExprKind::Const:
      return llvm::ConstantInt::get(int_, static_cast<uint64_t>(e.as<symbolic::Const>()->value), true);
    case ExprKind::BoolConst:
      return b_.getInt1(e.as<symbolic::BoolConst>()->value);
    case ExprKind::Sym: {
      const std::string& name = e.as<symbolic::Sym>()->name;
      llvm::Value* v = symbol_(name);
      internal_assert(v != nullptr) << "no value for symbol '" << name << "'";
      internal_assert(v->getType()->isIntegerTy()) << "symbol '" << name << "' is not an integer";
      return b_.CreateSExtOrTrunc(v, int_);
    }
    case ExprKind::Not:
      return b_.CreateNot(as_bool(emit(e.as<symbolic::Not>()->a)));
    default:
      break;
    }
    const auto* bin = static_cast<const symbolic::BinaryNode*>(e.get());
    llvm::Value* x = emit(bin->a);
    llvm::Value* y = emit(bin->b);
    const bool nsw = options_.no_signed_wrap;
    if (options_.overflowed) {
      switch (e.kind()) {
      case ExprKind::Add:
        return checked(llvm::Intrinsic::sadd_with_overflow, x, y);
      case ExprKind::Sub:
        return checked(llvm::Intrinsic::ssub_with_overflow, x, y);
      case ExprKind::Mul:
        return checked(llvm::Intrinsic::smul_with_overflow, x, y);
      default:
        break;
      }
    }
    switch (e.kind()) {
    case ExprKind::Add:
      return b_.CreateAdd(as_int(x), as_int(y), "", false, nsw);
    case ExprKind::Sub:
      return b_.CreateSub(as_int(x), as_int(y), "", false, nsw);
    case ExprKind::Mul:
      return b_.CreateMul(as_int(x), as_int(y), "", false, nsw);
    case ExprKind::FloorDiv:
      return emit_floordiv(b_, as_int(x), as_int(y));
    case ExprKind::FloorMod:
      return emit_floormod(b_, as_int(x), as_int(y));
    case ExprKind::Min:
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, as_int(x), as_int(y));
    case ExprKind::Max:
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, as_int(x), as_int(y));
    case ExprKind::EQ:
      return b_.CreateICmpEQ(as_int(x), as_int(y));
    case ExprKind::NE:
      return b_.CreateICmpNE(as_int(x), as_int(y));
    case ExprKind::LT:
      return b_.CreateICmpSLT(as_int(x), as_int(y));
    case ExprKind::LE:
      return b_.CreateICmpSLE(as_int(x), as_int(y));
    case ExprKind::And:
      return b_.CreateAnd(as_bool(x), as_bool(y));
    case ExprKind::Or:
      return b_.CreateOr(as_bool(x), as_bool(y));
    default:
      internal_error << "unhandled symbolic node " << symbolic::kind_name(e.kind());
    }
  }

  llvm::Value* as_int(llvm::Value* v) { return v->getType()->isIntegerTy(1) ? b_.CreateZExt(v, int_) : v; }
  llvm::Value* as_bool(llvm::Value* v) {
    return v->getType()->isIntegerTy(1) ? v : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }

private:
  // x op y through an `*.with.overflow` intrinsic; its overflow bit joins *overflowed.
  llvm::Value* checked(llvm::Intrinsic::ID id, llvm::Value* x, llvm::Value* y) {
    llvm::Value* pair = b_.CreateBinaryIntrinsic(id, as_int(x), as_int(y));
    llvm::Value* bit = b_.CreateExtractValue(pair, 1);
    llvm::Value*& acc = *options_.overflowed;
    acc = acc ? b_.CreateOr(acc, bit) : bit;
    return b_.CreateExtractValue(pair, 0);
  }

  llvm::IRBuilder<>& b_;
  const SymbolLookup& symbol_;
  const SymbolicOptions& options_;
  llvm::IntegerType* int_;
};

} // namespace

llvm::Value* emit_floordiv(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  internal_assert(t->isIntegerTy() && y->getType() == t) << "floordiv of mismatched types";
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  if (llvm::ConstantInt* c = constant_divisor(y)) {
    if (c->isZero()) return zero;
    if (c->isOne()) return x;
    if (c->isMinusOne()) return b.CreateNeg(x); // INT_MIN / -1 wraps
    if (!c->isNegative() && c->getValue().isPowerOf2())
      return b.CreateAShr(x, c->getValue().logBase2());
    DivRem dr = floor_divrem(b, x, c);
    return b.CreateSub(dr.q, b.CreateZExt(dr.adjust, t));
  }
  DivRem dr = floor_divrem(b, x, safe_divisor(b, y));
  llvm::Value* q = b.CreateSub(dr.q, b.CreateZExt(dr.adjust, t));
  q = b.CreateSelect(b.CreateICmpEQ(y, llvm::ConstantInt::getSigned(t, -1)), b.CreateNeg(x), q);
  return b.CreateSelect(b.CreateICmpEQ(y, zero), zero, q);
}

llvm::Value* emit_floormod(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  internal_assert(t->isIntegerTy() && y->getType() == t) << "floormod of mismatched types";
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  if (llvm::ConstantInt* c = constant_divisor(y)) {
    if (c->isZero()) return x;
    if (c->isOne() || c->isMinusOne()) return zero;
    if (!c->isNegative() && c->getValue().isPowerOf2())
      return b.CreateAnd(x, llvm::ConstantInt::get(t, c->getValue() - 1));
    DivRem dr = floor_divrem(b, x, c);
    return b.CreateAdd(dr.r, b.CreateSelect(dr.adjust, c, zero));
  }
  // A divisor of -1 becomes 1, whose remainder (0) is already right.
  llvm::Value* d = safe_divisor(b, y);
  DivRem dr = floor_divrem(b, x, d);
  llvm::Value* r = b.CreateAdd(dr.r, b.CreateSelect(dr.adjust, d, zero));
  return b.CreateSelect(b.CreateICmpEQ(y, zero), x, r);
}

llvm::Value* emit_symbolic(llvm::IRBuilder<>& b, const symbolic::Expr& e, const SymbolLookup& symbol,
                           const SymbolicOptions& options) {
  Emitter emitter(b, symbol, options);
  return emitter.as_int(emitter.emit(e));
}

llvm::Value* emit_symbolic(llvm::IRBuilder<>& b, const symbolic::Expr& e,
                           const std::function<llvm::Value*(const std::string&)>& symbol) {
  return emit_symbolic(b, e, symbol, SymbolicOptions{});
}

llvm::Value* emit_symbolic_bool(llvm::IRBuilder<>& b, const symbolic::Expr& e, const SymbolLookup& symbol,
                                const SymbolicOptions& options) {
  Emitter emitter(b, symbol, options);
  return emitter.as_bool(emitter.emit(e));
}

llvm::Value* emit_symbolic_bool(llvm::IRBuilder<>& b, const symbolic::Expr& e,
                                const std::function<llvm::Value*(const std::string&)>& symbol) {
  return emit_symbolic_bool(b, e, symbol, SymbolicOptions{});
}

} // namespace dsc::llvmgen
