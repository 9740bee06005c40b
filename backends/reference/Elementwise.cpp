// Elementwise ops with NumPy broadcasting; see Value.h for the numeric semantics.

#include <cmath>

#include "backends/reference/Value.h"
#include "ir/Intrinsics.h"
#include "ir/OpRegistry.h"
#include "support/Assert.h"
#include "support/FloorDiv.h"

namespace dsc::reference {

using ir::DType;

namespace {

// The broadcast shape of the operands, or nullopt with a message.
std::optional<std::vector<int64_t>> broadcast(const std::string& op,
                                              const std::vector<const Value*>& xs, OpError& err) {
  size_t rank = 0;
  for (const Value* x : xs)
    rank = std::max(rank, x->shape().size());
  std::vector<int64_t> out(rank, 1);
  for (const Value* x : xs) {
    const std::vector<int64_t>& s = x->shape();
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[off + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o == 1) {
        o = s[i];
        continue;
      }
      std::string shapes;
      for (const Value* y : xs)
        shapes += (shapes.empty() ? "" : " and ") + shape_string(y->shape());
      err.message =
          op + ": shapes " + shapes + " do not broadcast (dim " + std::to_string(off + i) + ")";
      return std::nullopt;
    }
  }
  return out;
}

// Per operand, the flat offset of each output element.
std::vector<std::vector<int64_t>> broadcast_offsets(const std::vector<int64_t>& out,
                                                    const std::vector<const Value*>& xs) {
  int64_t n = product(out);
  std::vector<std::vector<int64_t>> offs(xs.size(), std::vector<int64_t>(static_cast<size_t>(n)));
  for (size_t k = 0; k < xs.size(); ++k) {
    const std::vector<int64_t>& s = xs[k]->shape();
    std::vector<int64_t> st = strides_of(s);
    // Strides per output dim; 0 where the operand broadcasts.
    std::vector<int64_t> bs(out.size(), 0);
    size_t off = out.size() - s.size();
    for (size_t i = 0; i < s.size(); ++i)
      bs[off + i] = s[i] == 1 ? 0 : st[i];
    std::vector<int64_t> idx(out.size(), 0);
    int64_t pos = 0;
    for (int64_t e = 0; e < n; ++e) {
      offs[k][static_cast<size_t>(e)] = pos;
      for (size_t d = out.size(); d-- > 0;) {
        ++idx[d];
        pos += bs[d];
        if (idx[d] < out[d]) break;
        pos -= bs[d] * idx[d];
        idx[d] = 0;
      }
    }
  }
  return offs;
}

// The dtype operands share: a weak literal adopts the other's.
std::optional<DType> unify(const std::string& op, const Value& a, const Value& b, bool* weak,
                           OpError& err) {
  *weak = a.weak && b.weak;
  if (a.weak && !b.weak) return b.dtype;
  if (b.weak && !a.weak) return a.dtype;
  if (a.weak && b.weak) {
    if (ir::is_float(a.dtype) || ir::is_float(b.dtype)) return DType::F64;
    if (a.dtype == DType::Bool && b.dtype == DType::Bool) return DType::Bool;
    return DType::I64;
  }
  if (a.dtype != b.dtype) {
    err.message = op + ": operands have different dtypes: " + ir::dtype_name(a.dtype) + " and " +
                  ir::dtype_name(b.dtype);
    return std::nullopt;
  }
  return a.dtype;
}

// The comparisons and logic, on floats or integers alike.
template <typename T> T compare(ir::OpId op, T a, T b) {
  using ir::OpId;
  switch (op) {
  case OpId::eq:
    return a == b;
  case OpId::ne:
    return a != b;
  case OpId::lt:
    return a < b;
  case OpId::le:
    return a <= b;
  case OpId::gt:
    return a > b;
  case OpId::ge:
    return a >= b;
  case OpId::logical_and:
    return (a != 0) && (b != 0);
  case OpId::logical_or:
    return (a != 0) || (b != 0);
  default:
    internal_error << "'" << ir::op_name(op) << "' is not a binary elementwise op";
  }
}

// The binary elementwise ops on floats, as computed in double.
double fbinary(ir::OpId op, double a, double b) {
  using ir::OpId;
  switch (op) {
  case OpId::add:
    return a + b;
  case OpId::sub:
    return a - b;
  case OpId::mul:
    return a * b;
  case OpId::div:
    return a / b;
  case OpId::pow: {
    const double xs[] = {a, b};
    return ir::intrinsic(ir::IntrinsicId::pow).reference(xs);
  }
  case OpId::maximum:
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  case OpId::minimum:
    return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  default:
    return compare(op, a, b);
  }
}

// The same on integers and bools, wrapping as the compiled code does.
int64_t ibinary(ir::OpId op, int64_t a, int64_t b) {
  using ir::OpId;
  auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
  switch (op) {
  case OpId::add:
    return static_cast<int64_t>(u(a) + u(b));
  case OpId::sub:
    return static_cast<int64_t>(u(a) - u(b));
  case OpId::mul:
    return static_cast<int64_t>(u(a) * u(b));
  case OpId::div:
    return floor_div(a, b);
  case OpId::pow: {
    const int64_t xs[] = {a, b};
    return ir::intrinsic(ir::IntrinsicId::pow).reference_int(xs);
  }
  case OpId::maximum:
    return std::max(a, b);
  case OpId::minimum:
    return std::min(a, b);
  default:
    return compare(op, a, b);
  }
}

bool is_comparison(ir::OpId op) {
  using ir::OpId;
  return op == OpId::eq || op == OpId::ne || op == OpId::lt || op == OpId::le || op == OpId::gt ||
         op == OpId::ge;
}

Result binary(const std::string& op, const Value& a, const Value& b, OpError& err) {
  const ir::OpId id = ir::find_op(op)->id;
  bool weak = false;
  std::optional<DType> d = unify(op, a, b, &weak, err);
  if (!d) return std::nullopt;
  bool logical = id == ir::OpId::logical_and || id == ir::OpId::logical_or;
  if (logical && *d != DType::Bool) {
    err.message = op + " expects bool tensors, got " + ir::dtype_name(*d);
    return std::nullopt;
  }
  if (!logical && !is_comparison(id) && *d == DType::Bool) {
    err.message = op + " expects numeric tensors, got bool";
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> shape = broadcast(op, {&a, &b}, err);
  if (!shape) return std::nullopt;
  DType out_dtype = is_comparison(id) ? DType::Bool : *d;
  Value out = make_tensor(out_dtype, *shape);
  out.weak = weak;
  std::vector<std::vector<int64_t>> offs = broadcast_offsets(*shape, {&a, &b});
  int64_t n = out.numel();
  bool in_float = ir::is_float(*d);
  for (int64_t i = 0; i < n; ++i) {
    int64_t ia = offs[0][static_cast<size_t>(i)], ib = offs[1][static_cast<size_t>(i)];
    if (in_float) {
      // Round each operand to the shared dtype first: a weak f64 literal becomes f32 here.
      double x = load_f(a, ia), y = load_f(b, ib);
      if (*d == DType::F32) x = static_cast<float>(x), y = static_cast<float>(y);
      if (*d == DType::F16)
        x = half_to_float(float_to_half(static_cast<float>(x))),
        y = half_to_float(float_to_half(static_cast<float>(y)));
      if (*d == DType::BF16)
        x = bf16_to_float(float_to_bf16(static_cast<float>(x))),
        y = bf16_to_float(float_to_bf16(static_cast<float>(y)));
      store_f(out, i, fbinary(id, x, y));
    } else {
      store_i(out, i, ibinary(id, load_i(a, ia), load_i(b, ib)));
    }
  }
  return out;
}

// The ops applying a unary intrinsic of ir/Intrinsics.def to each element, computed by its
// reference implementations.
Result unary(const std::string& op, const ir::IntrinsicDef& fn, const Value& x, OpError& err) {
  DType d = x.dtype;
  if (fn.domain == ir::IntrinsicDomain::Bool && d != DType::Bool) {
    err.message = op + " expects a bool tensor, got " + std::string(ir::dtype_name(d));
    return std::nullopt;
  }
  if (fn.domain != ir::IntrinsicDomain::Bool && d == DType::Bool) {
    err.message = op + " expects a numeric tensor, got bool";
    return std::nullopt;
  }
  if (fn.domain == ir::IntrinsicDomain::Float && !ir::is_float(d)) {
    if (!x.weak) {
      err.message = op + " expects a float tensor, got " + std::string(ir::dtype_name(d));
      return std::nullopt;
    }
    d = DType::F32;
  }
  Value out = make_tensor(d, x.shape());
  out.weak = x.weak;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (ir::is_float(d)) {
      double v = load_f(x, i);
      store_f(out, i, fn.reference(&v));
    } else {
      int64_t v = load_i(x, i);
      store_i(out, i, fn.reference_int(&v));
    }
  }
  return out;
}

Result where(const Value& c, const Value& a, const Value& b, OpError& err) {
  if (c.dtype != DType::Bool) {
    err.message = "where expects a bool condition, got " + std::string(ir::dtype_name(c.dtype));
    return std::nullopt;
  }
  bool weak = false;
  std::optional<DType> d = unify(ir::op_name(ir::OpId::where), a, b, &weak, err);
  if (!d) return std::nullopt;
  std::optional<std::vector<int64_t>> shape =
      broadcast(ir::op_name(ir::OpId::where), {&c, &a, &b}, err);
  if (!shape) return std::nullopt;
  Value out = make_tensor(*d, *shape);
  out.weak = weak && c.weak;
  std::vector<std::vector<int64_t>> offs = broadcast_offsets(*shape, {&c, &a, &b});
  for (int64_t i = 0; i < out.numel(); ++i) {
    size_t k = static_cast<size_t>(i);
    const Value& src = load_i(c, offs[0][k]) ? a : b;
    int64_t at = load_i(c, offs[0][k]) ? offs[1][k] : offs[2][k];
    if (ir::is_float(*d))
      store_f(out, i, load_f(src, at));
    else
      store_i(out, i, load_i(src, at));
  }
  return out;
}

} // namespace

Result eval_elementwise(const std::string& op, const std::vector<Value>& args, OpError& err) {
  for (const Value& v : args)
    if (!v.is_tensor() && v.kind != Value::Kind::Str) {
      err.message = op + " expects tensor arguments";
      return std::nullopt;
    }
  const ir::OpId id = ir::find_op(op)->id;
  if (id == ir::OpId::where) return where(args[0], args[1], args[2], err);
  if (id == ir::OpId::cast) {
    std::optional<DType> to = ir::parse_dtype(args[1].str);
    if (!to) {
      err.message = "cast: unknown dtype '" + args[1].str + "'";
      return std::nullopt;
    }
    return convert(args[0], *to);
  }
  if (const ir::IntrinsicDef* fn = ir::find_intrinsic(op); fn && fn->arity == 1)
    return unary(op, *fn, args[0], err);
  return binary(op, args[0], args[1], err);
}

} // namespace dsc::reference
