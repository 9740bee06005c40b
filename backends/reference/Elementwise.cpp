// Elementwise ops with NumPy broadcasting; see Value.h for the numeric semantics.

#include <cmath>

#include "backends/reference/Value.h"
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

int64_t ipow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : (base == -1 ? (e % 2 ? -1 : 1) : 0);
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  while (e > 0) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<int64_t>(r);
}

double fbinary(const std::string& op, double a, double b) {
  if (op == "add") return a + b;
  if (op == "sub") return a - b;
  if (op == "mul") return a * b;
  if (op == "div") return a / b;
  if (op == "pow") return std::pow(a, b);
  if (op == "maximum") return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  if (op == "minimum") return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  if (op == "eq") return a == b;
  if (op == "ne") return a != b;
  if (op == "lt") return a < b;
  if (op == "le") return a <= b;
  if (op == "gt") return a > b;
  if (op == "ge") return a >= b;
  if (op == "logical_and") return (a != 0) && (b != 0);
  return (a != 0) || (b != 0); // logical_or
}

int64_t ibinary(const std::string& op, int64_t a, int64_t b) {
  // Wrapping arithmetic, as the compiled code's.
  auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
  if (op == "add") return static_cast<int64_t>(u(a) + u(b));
  if (op == "sub") return static_cast<int64_t>(u(a) - u(b));
  if (op == "mul") return static_cast<int64_t>(u(a) * u(b));
  if (op == "div") return floor_div(a, b);
  if (op == "pow") return ipow(a, b);
  if (op == "maximum") return std::max(a, b);
  if (op == "minimum") return std::min(a, b);
  if (op == "eq") return a == b;
  if (op == "ne") return a != b;
  if (op == "lt") return a < b;
  if (op == "le") return a <= b;
  if (op == "gt") return a > b;
  if (op == "ge") return a >= b;
  if (op == "logical_and") return (a != 0) && (b != 0);
  return (a != 0) || (b != 0);
}

bool is_comparison(const std::string& op) {
  return op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge";
}

Result binary(const std::string& op, const Value& a, const Value& b, OpError& err) {
  bool weak = false;
  std::optional<DType> d = unify(op, a, b, &weak, err);
  if (!d) return std::nullopt;
  bool logical = op == "logical_and" || op == "logical_or";
  if (logical && *d != DType::Bool) {
    err.message = op + " expects bool tensors, got " + ir::dtype_name(*d);
    return std::nullopt;
  }
  if (!logical && !is_comparison(op) && !(op == "eq" || op == "ne") && *d == DType::Bool) {
    err.message = op + " expects numeric tensors, got bool";
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> shape = broadcast(op, {&a, &b}, err);
  if (!shape) return std::nullopt;
  DType out_dtype = is_comparison(op) ? DType::Bool : *d;
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
      store_f(out, i, fbinary(op, x, y));
    } else {
      store_i(out, i, ibinary(op, load_i(a, ia), load_i(b, ib)));
    }
  }
  return out;
}

double funary(const std::string& op, double x) {
  if (op == "exp") return std::exp(x);
  if (op == "log") return std::log(x);
  if (op == "tanh") return std::tanh(x);
  if (op == "erf") return std::erf(x);
  if (op == "sqrt") return std::sqrt(x);
  if (op == "rsqrt") return 1.0 / std::sqrt(x);
  if (op == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (op == "abs") return std::fabs(x);
  return -x; // neg
}

Result unary(const std::string& op, const Value& x, OpError& err) {
  if (op == "logical_not") {
    if (x.dtype != DType::Bool) {
      err.message =
          "logical_not expects a bool tensor, got " + std::string(ir::dtype_name(x.dtype));
      return std::nullopt;
    }
    Value out = make_tensor(DType::Bool, x.shape());
    out.weak = x.weak;
    for (int64_t i = 0; i < x.numel(); ++i)
      store_i(out, i, !load_i(x, i));
    return out;
  }
  bool float_only = op != "abs" && op != "neg";
  DType d = x.dtype;
  if (d == DType::Bool) {
    err.message = op + " expects a numeric tensor, got bool";
    return std::nullopt;
  }
  if (float_only && !ir::is_float(d)) {
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
      store_f(out, i, funary(op, load_f(x, i)));
    } else {
      int64_t v = load_i(x, i);
      uint64_t neg = 0 - static_cast<uint64_t>(v);
      store_i(out, i, op == "neg" || v < 0 ? static_cast<int64_t>(neg) : v);
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
  std::optional<DType> d = unify("where", a, b, &weak, err);
  if (!d) return std::nullopt;
  std::optional<std::vector<int64_t>> shape = broadcast("where", {&c, &a, &b}, err);
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
  if (op == "where") return where(args[0], args[1], args[2], err);
  if (op == "cast") {
    std::optional<DType> to = ir::parse_dtype(args[1].str);
    if (!to) {
      err.message = "cast: unknown dtype '" + args[1].str + "'";
      return std::nullopt;
    }
    return convert(args[0], *to);
  }
  if (args.size() == 2) return binary(op, args[0], args[1], err);
  return unary(op, args[0], err);
}

} // namespace dsc::reference
