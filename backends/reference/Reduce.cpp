// sum, max, min, mean over an axis list (all axes by default); sums accumulate in double for
// floats and in int64 for integers. argmax and argmin over one axis (the last by default): the
// i64 index of the first greatest (least) element, where a NaN is both, as in NumPy.

#include <cmath>

#include "backends/reference/Value.h"
#include "ir/OpRegistry.h"

namespace dsc::reference {

using ir::DType;

namespace {

Result eval_arg_reduce(const std::string& name, bool greatest, const std::vector<Value>& args,
                       OpError& err) {
  const Value& x = args[0];
  size_t rank = x.shape().size();
  std::optional<int64_t> written =
      args[1].kind == Value::Kind::None ? std::optional<int64_t>(-1) : as_int(args[1]);
  std::optional<size_t> axis = written ? normalize_axis(*written, rank) : std::nullopt;
  if (!axis) {
    err.message = name + ": axis out of range for rank " + std::to_string(rank);
    return std::nullopt;
  }
  bool keepdims = args[2].kind != Value::Kind::None && as_bool(args[2]).value_or(false);
  const std::vector<int64_t>& s = x.shape();
  int64_t n = s[*axis];
  if (n == 0) {
    err.message = name + " of an empty axis of " + type_string(x.dtype, s);
    return std::nullopt;
  }
  std::vector<int64_t> out_shape;
  for (size_t i = 0; i < rank; ++i)
    if (i != *axis || keepdims) out_shape.push_back(i == *axis ? 1 : s[i]);
  // The elements of a row are `inner` apart; rows are numbered outer-major.
  int64_t inner = 1;
  for (size_t i = *axis + 1; i < rank; ++i)
    inner *= s[i];
  int64_t rows = x.numel() / n;
  Value out = make_tensor(DType::I64, out_shape);
  bool is_f = ir::is_float(x.dtype);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = (row / inner) * n * inner + row % inner;
    int64_t best = 0;
    for (int64_t k = 1; k < n; ++k) {
      int64_t at = base + k * inner, best_at = base + best * inner;
      bool better;
      if (is_f) {
        double v = load_f(x, at), b = load_f(x, best_at);
        better = !std::isnan(b) && (std::isnan(v) || (greatest ? v > b : v < b));
      } else {
        int64_t v = load_i(x, at), b = load_i(x, best_at);
        better = greatest ? v > b : v < b;
      }
      if (better) best = k;
    }
    store_i(out, row, best);
  }
  return out;
}

} // namespace

Result eval_reduce(const std::string& name, const std::vector<Value>& args, OpError& err) {
  const ir::OpId op = ir::find_op(name)->id;
  const Value& x = args[0];
  if (!x.is_tensor()) {
    err.message = name + " expects a tensor";
    return std::nullopt;
  }
  if (op == ir::OpId::argmax || op == ir::OpId::argmin)
    return eval_arg_reduce(name, op == ir::OpId::argmax, args, err);
  size_t rank = x.shape().size();
  std::vector<bool> reduced(rank, false);
  std::vector<int64_t> axes;
  if (args[1].kind == Value::Kind::None) {
    for (size_t i = 0; i < rank; ++i)
      axes.push_back(static_cast<int64_t>(i));
  } else if (args[1].kind == Value::Kind::Shape) {
    axes = args[1].dims;
  } else if (std::optional<int64_t> a = as_int(args[1])) {
    axes = {*a};
  } else {
    err.message = name + ": axis must be an integer or a list of integers";
    return std::nullopt;
  }
  for (int64_t a : axes) {
    std::optional<size_t> n = normalize_axis(a, rank);
    if (!n || reduced[*n]) {
      err.message = name + ": axis " + std::to_string(a) + (n ? " repeated" : " out of range") +
                    " for rank " + std::to_string(rank);
      return std::nullopt;
    }
    reduced[*n] = true;
  }
  bool keepdims = args[2].kind != Value::Kind::None && as_bool(args[2]).value_or(false);

  std::vector<int64_t> out_shape, kept_shape; // kept_shape: with 1 at reduced axes
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    kept_shape.push_back(reduced[i] ? 1 : x.shape()[i]);
    if (reduced[i]) count *= x.shape()[i];
    if (!reduced[i] || keepdims) out_shape.push_back(reduced[i] ? 1 : x.shape()[i]);
  }
  if ((op == ir::OpId::max || op == ir::OpId::min) && count == 0 && product(kept_shape) > 0) {
    err.message = name + ": reduction over an empty axis of " + type_string(x.dtype, x.shape());
    return std::nullopt;
  }
  if (op == ir::OpId::mean && !ir::is_float(x.dtype)) {
    err.message = "mean expects a float tensor, got " + type_string(x.dtype, x.shape());
    return std::nullopt;
  }
  Value out = make_tensor(x.dtype, out_shape);
  out.weak = x.weak;
  int64_t n_out = product(kept_shape);
  bool is_f = ir::is_float(x.dtype);
  std::vector<double> facc(static_cast<size_t>(n_out), 0.0);
  std::vector<int64_t> iacc(static_cast<size_t>(n_out), 0);
  std::vector<bool> seen(static_cast<size_t>(n_out), false);
  std::vector<int64_t> kst = strides_of(kept_shape);
  std::vector<int64_t> idx(rank, 0);
  const std::vector<int64_t>& s = x.shape();
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d)
      if (!reduced[d]) o += idx[d] * kst[d];
    size_t k = static_cast<size_t>(o);
    if (is_f) {
      double v = load_f(x, e);
      if (op == ir::OpId::sum || op == ir::OpId::mean)
        facc[k] += v;
      else if (!seen[k] || std::isnan(v))
        facc[k] = v;
      else if (!std::isnan(facc[k]))
        facc[k] = op == ir::OpId::max ? std::max(facc[k], v) : std::min(facc[k], v);
    } else {
      int64_t v = load_i(x, e);
      if (op == ir::OpId::sum)
        iacc[k] = static_cast<int64_t>(static_cast<uint64_t>(iacc[k]) + static_cast<uint64_t>(v));
      else if (!seen[k])
        iacc[k] = v;
      else
        iacc[k] = op == ir::OpId::max ? std::max(iacc[k], v) : std::min(iacc[k], v);
    }
    seen[k] = true;
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < s[d]) break;
      idx[d] = 0;
    }
  }
  for (int64_t i = 0; i < n_out; ++i) {
    size_t k = static_cast<size_t>(i);
    if (is_f)
      store_f(out, i, op == ir::OpId::mean ? facc[k] / static_cast<double>(count) : facc[k]);
    else
      store_i(out, i, iacc[k]);
  }
  return out;
}

} // namespace dsc::reference
