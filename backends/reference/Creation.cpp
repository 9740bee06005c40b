// arange, full, zeros, shape_of, nonzero, mask_select, unique, first_rows.

#include <algorithm>
#include <cmath>

#include "backends/reference/Value.h"
#include "ir/OpRegistry.h"

namespace dsc::reference {

using ir::DType;

namespace {

std::optional<DType> dtype_arg(const Value& v, DType fallback, const std::string& op,
                               OpError& err) {
  if (v.kind == Value::Kind::None) return fallback;
  std::optional<DType> d = ir::parse_dtype(v.str);
  if (!d) err.message = op + ": unknown dtype '" + v.str + "'";
  return d;
}

bool valid_shape(const std::string& op, const Value& shape, OpError& err) {
  for (int64_t d : shape.dims)
    if (d < 0) {
      err.message = op + ": negative dim in " + shape_string(shape.dims);
      return false;
    }
  return true;
}

Result arange(const std::vector<Value>& args, OpError& err) {
  std::optional<int64_t> a = as_int(args[0]);
  std::optional<int64_t> b =
      args[1].kind == Value::Kind::None ? std::optional<int64_t>(0) : as_int(args[1]);
  std::optional<int64_t> step =
      args[2].kind == Value::Kind::None ? std::optional<int64_t>(1) : as_int(args[2]);
  if (!a || !b || !step) {
    err.message = "arange expects integer start, end and step";
    return std::nullopt;
  }
  int64_t start = *a, end = *b;
  if (args[1].kind == Value::Kind::None) std::swap(start, end); // arange(n) counts from 0
  if (*step < 1) {
    err.message = "arange: step " + std::to_string(*step) + " must be >= 1";
    return std::nullopt;
  }
  std::optional<DType> d = dtype_arg(args[3], DType::I64, ir::op_name(ir::OpId::arange), err);
  if (!d) return std::nullopt;
  int64_t n = end > start ? (end - start + *step - 1) / *step : 0;
  Value out = make_tensor(*d, {n});
  for (int64_t i = 0; i < n; ++i)
    store_i(out, i, start + i * *step);
  return out;
}

Result full(const std::vector<Value>& args, OpError& err) {
  if (!valid_shape(ir::op_name(ir::OpId::full), args[0], err)) return std::nullopt;
  std::optional<DType> d = dtype_arg(args[2], DType::F32, ir::op_name(ir::OpId::full), err);
  if (!d) return std::nullopt;
  std::optional<double> fv = as_float(args[1]);
  if (!fv) {
    err.message = "full expects a scalar value";
    return std::nullopt;
  }
  Value out = make_tensor(*d, args[0].dims);
  bool int_value = !ir::is_float(args[1].dtype);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (int_value)
      store_i(out, i, load_i(args[1], 0));
    else
      store_f(out, i, *fv);
  }
  return out;
}

Result nonzero(const Value& x) {
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (ir::is_float(x.dtype) ? load_f(x, i) != 0.0 : load_i(x, i) != 0) hits.push_back(i);
  size_t rank = x.shape().size();
  Value out =
      make_tensor(DType::I64, {static_cast<int64_t>(hits.size()), static_cast<int64_t>(rank)});
  std::vector<int64_t> st = strides_of(x.shape());
  for (size_t h = 0; h < hits.size(); ++h)
    for (size_t d = 0; d < rank; ++d)
      store_i(out, static_cast<int64_t>(h * rank + d), (hits[h] / st[d]) % x.shape()[d]);
  return out;
}

// The sub-tensors of x (elements when the mask has x's rank) where the mask holds.
Result mask_select(const Value& x, const Value& mask, OpError& err) {
  const std::vector<int64_t>& xs = x.shape();
  const std::vector<int64_t>& ms = mask.shape();
  if (!mask.is_tensor() || ms.empty() || ms.size() > xs.size() ||
      !std::equal(ms.begin(), ms.end(), xs.begin())) {
    err.message = "mask_select: the mask's shape must be x's first dims";
    return std::nullopt;
  }
  int64_t inner = 1;
  for (size_t d = ms.size(); d < xs.size(); ++d) inner *= xs[d];
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < mask.numel(); ++i)
    if (load_i(mask, i) != 0) hits.push_back(i);
  std::vector<int64_t> shape = {static_cast<int64_t>(hits.size())};
  shape.insert(shape.end(), xs.begin() + static_cast<long>(ms.size()), xs.end());
  Value out = make_tensor(x.dtype, shape);
  for (size_t h = 0; h < hits.size(); ++h)
    for (int64_t k = 0; k < inner; ++k) {
      const int64_t to = static_cast<int64_t>(h) * inner + k, from = hits[h] * inner + k;
      if (ir::is_float(x.dtype)) store_f(out, to, load_f(x, from));
      else store_i(out, to, load_i(x, from));
    }
  return out;
}

// The distinct values of x, ascending; NaN sorts last and all NaNs are one value (NumPy).
Result unique(const Value& x) {
  const bool fp = ir::is_float(x.dtype);
  std::vector<int64_t> order(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  auto less = [&](int64_t a, int64_t b) {
    if (!fp) return load_i(x, a) < load_i(x, b);
    double u = load_f(x, a), v = load_f(x, b);
    return u < v || (!std::isnan(u) && std::isnan(v));
  };
  std::stable_sort(order.begin(), order.end(), less);
  std::vector<int64_t> kept;
  for (int64_t i : order)
    if (kept.empty() || less(kept.back(), i)) kept.push_back(i);
  Value out = make_tensor(x.dtype, {static_cast<int64_t>(kept.size())});
  for (size_t k = 0; k < kept.size(); ++k) {
    if (fp) store_f(out, static_cast<int64_t>(k), load_f(x, kept[k]));
    else store_i(out, static_cast<int64_t>(k), load_i(x, kept[k]));
  }
  return out;
}

// The first n rows of x; n outside [0, rows] is an error.
Result first_rows(const Value& x, const Value& n, OpError& err) {
  if (!n.is_tensor() || n.numel() != 1 || ir::is_float(n.dtype)) {
    err.message = "first_rows: n must be an integer scalar tensor";
    return std::nullopt;
  }
  const int64_t rows = x.shape().empty() ? 0 : x.shape()[0];
  const int64_t count = load_i(n, 0);
  if (count < 0 || count > rows) {
    err.message = "first_rows: n = " + std::to_string(count) + " is outside [0, " +
                  std::to_string(rows) + "], the rows of x";
    return std::nullopt;
  }
  std::vector<int64_t> shape = x.shape();
  shape[0] = count;
  Value out = make_tensor(x.dtype, shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (ir::is_float(x.dtype)) store_f(out, i, load_f(x, i));
    else store_i(out, i, load_i(x, i));
  }
  return out;
}

} // namespace

Result eval_creation(const std::string& op, const std::vector<Value>& args, OpError& err) {
  const ir::OpId id = ir::find_op(op)->id;
  if (id == ir::OpId::arange) return arange(args, err);
  if (id == ir::OpId::full) return full(args, err);
  if (id == ir::OpId::zeros) {
    if (!valid_shape(ir::op_name(id), args[0], err)) return std::nullopt;
    std::optional<DType> d = dtype_arg(args[1], DType::F32, ir::op_name(id), err);
    if (!d) return std::nullopt;
    return make_tensor(*d, args[0].dims);
  }
  if (!args[0].is_tensor()) {
    err.message = op + " expects a tensor";
    return std::nullopt;
  }
  if (id == ir::OpId::shape_of) {
    const std::vector<int64_t>& s = args[0].shape();
    Value out = make_tensor(DType::I64, {static_cast<int64_t>(s.size())});
    for (size_t i = 0; i < s.size(); ++i)
      store_i(out, static_cast<int64_t>(i), s[i]);
    return out;
  }
  if (id == ir::OpId::first_rows) return first_rows(args[0], args[1], err);
  if (id == ir::OpId::mask_select) return mask_select(args[0], args[1], err);
  if (id == ir::OpId::unique) return unique(args[0]);
  return nonzero(args[0]);
}

} // namespace dsc::reference
