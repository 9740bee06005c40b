// Data movement: reshape, permute, broadcast_to, concat, split, slice, take, pad, update_slice.
// Elements are copied bit for bit.

#include <algorithm>
#include <cstring>

#include "backends/reference/Value.h"
#include "ir/OpRegistry.h"
#include "support/Assert.h"

namespace dsc::reference {

using ir::DType;

namespace {

void copy_elem(Value& out, int64_t i, const Value& x, int64_t j) {
  size_t b = runtime::dtype_bytes(to_dl(x.dtype));
  std::memcpy(static_cast<char*>(out.tensor->data()) + static_cast<size_t>(i) * b,
              static_cast<const char*>(x.tensor->data()) + static_cast<size_t>(j) * b, b);
}

Value like(const Value& x, std::vector<int64_t> shape) {
  Value out = make_tensor(x.dtype, std::move(shape));
  out.weak = x.weak;
  return out;
}

// Calls f(out_flat, coords) for every element of `shape` in row-major order.
template <typename F> void for_each_index(const std::vector<int64_t>& shape, F f) {
  int64_t n = product(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    f(e, idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

int64_t flat(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  int64_t o = 0;
  for (size_t d = 0; d < idx.size(); ++d)
    o += idx[d] * strides[d];
  return o;
}

Result reshape(const Value& x, const Value& shape, OpError& err) {
  std::vector<int64_t> dims = shape.dims;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1 && infer < 0) {
      infer = static_cast<int>(i);
      continue;
    }
    if (dims[i] < 0) {
      err.message = "reshape: invalid dim " + std::to_string(dims[i]) + " in " + shape_string(dims);
      return std::nullopt;
    }
    known *= dims[i];
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0) {
      err.message = "reshape: cannot reshape " + type_string(x.dtype, x.shape()) + " to " +
                    shape_string(dims);
      return std::nullopt;
    }
    dims[static_cast<size_t>(infer)] = x.numel() / known;
  } else if (known != x.numel()) {
    err.message = "reshape: cannot reshape " + type_string(x.dtype, x.shape()) + " (" +
                  std::to_string(x.numel()) + " elements) to " + shape_string(dims);
    return std::nullopt;
  }
  Value out = like(x, dims);
  if (x.numel()) std::memcpy(out.tensor->data(), x.tensor->data(), x.tensor->nbytes());
  return out;
}

Result permute(const Value& x, const Value& perm_v, OpError& err) {
  size_t rank = x.shape().size();
  std::vector<size_t> perm;
  std::vector<bool> used(rank, false);
  if (perm_v.dims.size() != rank) {
    err.message = "permute: " + shape_string(perm_v.dims) + " is not a permutation of rank " +
                  std::to_string(rank);
    return std::nullopt;
  }
  for (int64_t p : perm_v.dims) {
    std::optional<size_t> a = normalize_axis(p, rank);
    if (!a || used[*a]) {
      err.message = "permute: " + shape_string(perm_v.dims) + " is not a permutation";
      return std::nullopt;
    }
    used[*a] = true;
    perm.push_back(*a);
  }
  std::vector<int64_t> shape;
  for (size_t p : perm)
    shape.push_back(x.shape()[p]);
  Value out = like(x, shape);
  std::vector<int64_t> st = strides_of(x.shape());
  for_each_index(shape, [&](int64_t e, const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d)
      o += idx[d] * st[perm[d]];
    copy_elem(out, e, x, o);
  });
  return out;
}

Result broadcast_to(const Value& x, const Value& shape_v, OpError& err) {
  const std::vector<int64_t>& shape = shape_v.dims;
  const std::vector<int64_t>& s = x.shape();
  if (s.size() > shape.size()) {
    err.message =
        "broadcast_to: cannot broadcast " + shape_string(s) + " to " + shape_string(shape);
    return std::nullopt;
  }
  size_t off = shape.size() - s.size();
  std::vector<int64_t> st = strides_of(s), bs(shape.size(), 0);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != shape[off + i] && s[i] != 1) {
      err.message = "broadcast_to: cannot broadcast " + shape_string(s) + " to " +
                    shape_string(shape) + " (dim " + std::to_string(off + i) + ")";
      return std::nullopt;
    }
    bs[off + i] = s[i] == 1 ? 0 : st[i];
  }
  Value out = like(x, shape);
  for_each_index(shape, [&](int64_t e, const std::vector<int64_t>& idx) {
    copy_elem(out, e, x, flat(idx, bs));
  });
  return out;
}

Result concat(const Value& list, const Value& axis_v, OpError& err) {
  if (list.kind != Value::Kind::List || list.items.empty()) {
    err.message = "concat expects a non-empty list of tensors";
    return std::nullopt;
  }
  const Value* strong = &list.items[0];
  for (const Value& v : list.items)
    if (!v.weak) strong = &v;
  const std::vector<int64_t>& s0 = strong->shape();
  std::optional<size_t> axis = normalize_axis(as_int(axis_v).value_or(0), s0.size());
  if (!axis) {
    err.message = "concat: axis out of range for rank " + std::to_string(s0.size());
    return std::nullopt;
  }
  std::vector<int64_t> shape = s0;
  shape[*axis] = 0;
  std::vector<Value> parts;
  for (size_t k = 0; k < list.items.size(); ++k) {
    const Value& v = list.items[k];
    if (v.dtype != strong->dtype && !v.weak) {
      err.message = "concat: tensor " + std::to_string(k) + " is " +
                    type_string(v.dtype, v.shape()) + ", expected dtype " +
                    ir::dtype_name(strong->dtype);
      return std::nullopt;
    }
    bool ok = v.shape().size() == s0.size();
    for (size_t d = 0; ok && d < s0.size(); ++d)
      ok = d == *axis || v.shape()[d] == s0[d];
    if (!ok) {
      err.message = "concat: tensor " + std::to_string(k) + " has shape " +
                    shape_string(v.shape()) + ", incompatible with " + shape_string(s0) +
                    " along axis " + std::to_string(*axis);
      return std::nullopt;
    }
    shape[*axis] += v.shape()[*axis];
    parts.push_back(convert(v, strong->dtype));
  }
  Value out = make_tensor(strong->dtype, shape);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < *axis; ++d)
    outer *= shape[d];
  for (size_t d = *axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Value& p : parts) {
      int64_t chunk = p.shape()[*axis] * inner;
      for (int64_t j = 0; j < chunk; ++j)
        copy_elem(out, at++, p, o * chunk + j);
    }
  return out;
}

// x restricted to [start, start + len) along axis with the given step.
Value take_range(const Value& x, size_t axis, int64_t start, int64_t len, int64_t step) {
  std::vector<int64_t> shape = x.shape();
  shape[axis] = len;
  Value out = like(x, shape);
  std::vector<int64_t> st = strides_of(x.shape());
  for_each_index(shape, [&](int64_t e, const std::vector<int64_t>& idx) {
    int64_t o = flat(idx, st) + (start + idx[axis] * (step - 1)) * st[axis];
    copy_elem(out, e, x, o);
  });
  return out;
}

Result split(const Value& x, const Value& sections, const Value& axis_v, OpError& err) {
  std::optional<size_t> axis = normalize_axis(as_int(axis_v).value_or(0), x.shape().size());
  if (!axis) {
    err.message = "split: axis out of range for " + type_string(x.dtype, x.shape());
    return std::nullopt;
  }
  int64_t dim = x.shape()[*axis];
  std::vector<int64_t> sizes;
  if (sections.kind == Value::Kind::Shape && sections.dims.size() != 1) {
    sizes = sections.dims;
  } else {
    std::optional<int64_t> n = as_int(sections);
    if (!n || *n <= 0 || dim % *n != 0) {
      err.message = "split: " + std::to_string(n.value_or(0)) + " sections do not divide dim " +
                    std::to_string(*axis) + " of " + type_string(x.dtype, x.shape());
      return std::nullopt;
    }
    sizes.assign(static_cast<size_t>(*n), dim / *n);
  }
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s < 0 ? dim + 1 : s;
  if (total != dim) {
    err.message = "split: sizes " + shape_string(sizes) + " do not sum to dim " +
                  std::to_string(*axis) + " of " + type_string(x.dtype, x.shape());
    return std::nullopt;
  }
  std::vector<Value> parts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    parts.push_back(take_range(x, *axis, start, s, 1));
    start += s;
  }
  return make_tuple(std::move(parts));
}

Result slice(const std::vector<Value>& args, OpError& err) {
  const Value& x = args[0];
  size_t rank = x.shape().size();
  std::optional<size_t> axis = normalize_axis(as_int(args[1]).value_or(0), rank);
  if (!axis) {
    err.message = "slice: axis out of range for " + type_string(x.dtype, x.shape());
    return std::nullopt;
  }
  int64_t dim = x.shape()[*axis];
  int64_t start = as_int(args[2]).value_or(0);
  int64_t end = args[3].kind == Value::Kind::None ? dim : as_int(args[3]).value_or(dim);
  int64_t step = args[4].kind == Value::Kind::None ? 1 : as_int(args[4]).value_or(1);
  if (step < 1) {
    err.message = "slice: step " + std::to_string(step) + " must be >= 1";
    return std::nullopt;
  }
  // Python: negative indices count from the end, then bounds are clamped.
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  start = std::clamp<int64_t>(start, 0, dim);
  end = std::clamp<int64_t>(end, 0, dim);
  int64_t len = end > start ? (end - start + step - 1) / step : 0;
  return take_range(x, *axis, start, len, step);
}

Result take(const Value& x, const Value& indices, const Value& axis_v, OpError& err) {
  if (!indices.is_tensor() || !ir::is_int(indices.dtype)) {
    err.message = "take expects integer indices";
    return std::nullopt;
  }
  std::optional<size_t> axis = normalize_axis(as_int(axis_v).value_or(0), x.shape().size());
  if (!axis) {
    err.message = "take: axis out of range for " + type_string(x.dtype, x.shape());
    return std::nullopt;
  }
  const std::vector<int64_t>& s = x.shape();
  int64_t dim = s[*axis];
  int64_t outer = product(std::vector<int64_t>(s.begin(), s.begin() + static_cast<long>(*axis)));
  int64_t inner = product(std::vector<int64_t>(s.begin() + static_cast<long>(*axis) + 1, s.end()));
  std::vector<int64_t> shape(s.begin(), s.begin() + static_cast<long>(*axis));
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), s.begin() + static_cast<long>(*axis) + 1, s.end());
  Value out = like(x, shape);
  int64_t n_idx = indices.numel(), at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n_idx; ++k) {
      int64_t i = load_i(indices, k);
      if (i < -dim || i >= dim) {
        err.message = "take: index " + std::to_string(i) + " out of range for dim " +
                      std::to_string(*axis) + " of size " + std::to_string(dim);
        return std::nullopt;
      }
      if (i < 0) i += dim;
      for (int64_t j = 0; j < inner; ++j)
        copy_elem(out, at++, x, (o * dim + i) * inner + j);
    }
  return out;
}

Result pad(const Value& x, const Value& pads, const Value& value, OpError& err) {
  size_t rank = x.shape().size();
  if (pads.dims.size() != 2 * rank) {
    err.message = "pad expects 2 entries per dim (" + std::to_string(2 * rank) + "), got " +
                  std::to_string(pads.dims.size());
    return std::nullopt;
  }
  std::vector<int64_t> shape;
  for (size_t d = 0; d < rank; ++d) {
    int64_t n = x.shape()[d] + pads.dims[2 * d] + pads.dims[2 * d + 1];
    if (n < 0 || pads.dims[2 * d] < 0 || pads.dims[2 * d + 1] < 0) {
      err.message = "pad: negative padding " + shape_string(pads.dims);
      return std::nullopt;
    }
    shape.push_back(n);
  }
  Value out = like(x, shape);
  double fill = value.kind == Value::Kind::None ? 0.0 : as_float(value).value_or(0.0);
  std::vector<int64_t> st = strides_of(x.shape());
  for_each_index(shape, [&](int64_t e, const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t i = idx[d] - pads.dims[2 * d];
      if (i < 0 || i >= x.shape()[d]) {
        store_f(out, e, fill);
        return;
      }
      o += i * st[d];
    }
    copy_elem(out, e, x, o);
  });
  return out;
}

bool tensor_first(const ir::OpDef& op, const std::vector<Value>& args, OpError& err) {
  if (op.params[0].kind != ir::ParamKind::Tensor || args[0].is_tensor()) return true;
  err.message = std::string(op.name) + " expects a tensor";
  return false;
}

// A copy of dst with src at [start, start + n) along the axis: the interpreter never writes
// in place, so the compiled in-place form is checked against this pure one.
Result update_slice(const std::vector<Value>& args, OpError& err) {
  const Value& dst = args[0];
  const Value& src = args[1];
  const std::vector<int64_t>& ds = dst.shape();
  const std::vector<int64_t>& ss = src.shape();
  std::optional<size_t> axis = normalize_axis(as_int(args[2]).value_or(0), ds.size());
  if (!axis || !src.is_tensor() || src.dtype != dst.dtype || ss.size() != ds.size()) {
    err.message = "update_slice: cannot write " + type_string(src.dtype, ss) + " into " +
                  type_string(dst.dtype, ds);
    return std::nullopt;
  }
  const int64_t start = args[3].kind == Value::Kind::None ? 0 : as_int(args[3]).value_or(0);
  for (size_t d = 0; d < ds.size(); ++d) {
    const bool fits = d == *axis ? start >= 0 && start + ss[d] <= ds[d] : ss[d] == ds[d];
    if (fits) continue;
    err.message = "update_slice: " + type_string(src.dtype, ss) + " at " + std::to_string(start) +
                  " along axis " + std::to_string(*axis) + " does not fit in " +
                  type_string(dst.dtype, ds);
    return std::nullopt;
  }
  Value out = like(dst, ds);
  if (dst.numel()) std::memcpy(out.tensor->data(), dst.tensor->data(), dst.tensor->nbytes());
  const std::vector<int64_t> strides = strides_of(ds);
  for_each_index(ss, [&](int64_t e, const std::vector<int64_t>& idx) {
    std::vector<int64_t> at = idx;
    at[*axis] += start;
    copy_elem(out, flat(at, strides), src, e);
  });
  return out;
}

} // namespace

Result eval_layout(const std::string& op, const std::vector<Value>& args, OpError& err) {
  const ir::OpDef& def = *ir::find_op(op);
  if (!tensor_first(def, args, err)) return std::nullopt;
  switch (def.id) {
  case ir::OpId::reshape:
    return reshape(args[0], args[1], err);
  case ir::OpId::permute:
    return permute(args[0], args[1], err);
  case ir::OpId::broadcast_to:
    return broadcast_to(args[0], args[1], err);
  case ir::OpId::concat:
    return concat(args[0], args[1], err);
  case ir::OpId::split:
    return split(args[0], args[1], args[2], err);
  case ir::OpId::slice:
    return slice(args, err);
  case ir::OpId::take:
    return take(args[0], args[1], args[2], err);
  case ir::OpId::pad:
    return pad(args[0], args[1], args[2], err);
  case ir::OpId::update_slice:
    return update_slice(args, err);
  default:
    internal_error << "'" << op << "' is not a layout op";
  }
}

} // namespace dsc::reference
