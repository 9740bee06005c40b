#include "backends/reference/Value.h"

#include <cmath>
#include <cstring>

#include "support/Assert.h"

namespace dsc::reference {

using ir::DType;

Value make_tensor(DType dtype, std::vector<int64_t> shape) {
  Value v;
  v.kind = Value::Kind::Tensor;
  v.dtype = dtype;
  v.tensor =
      std::make_shared<runtime::Tensor>(runtime::Tensor::zeros(to_dl(dtype), std::move(shape)));
  return v;
}

Value make_tuple(std::vector<Value> items) {
  Value v;
  v.kind = Value::Kind::Tuple;
  v.items = std::move(items);
  return v;
}

Value weak_int(int64_t x) {
  Value v = make_tensor(DType::I64, {});
  store_i(v, 0, x);
  v.weak = true;
  return v;
}

Value weak_float(double x) {
  Value v = make_tensor(DType::F64, {});
  store_f(v, 0, x);
  v.weak = true;
  return v;
}

Value weak_bool(bool x) {
  Value v = make_tensor(DType::Bool, {});
  store_i(v, 0, x ? 1 : 0);
  v.weak = true;
  return v;
}

Value convert(const Value& v, DType dtype) {
  if (v.dtype == dtype && !v.weak) return v;
  Value out = make_tensor(dtype, v.shape());
  int64_t n = v.numel();
  bool src_float = ir::is_float(v.dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (src_float)
      store_f(out, i, load_f(v, i));
    else
      store_i(out, i, load_i(v, i));
  }
  return out;
}

double load_f(const Value& v, int64_t i) {
  const void* p = v.tensor->data();
  switch (v.dtype) {
  case DType::Bool:
    return static_cast<const uint8_t*>(p)[i] ? 1.0 : 0.0;
  case DType::I8:
    return static_cast<const int8_t*>(p)[i];
  case DType::I32:
    return static_cast<const int32_t*>(p)[i];
  case DType::I64:
    return static_cast<double>(static_cast<const int64_t*>(p)[i]);
  case DType::F16:
    return half_to_float(static_cast<const uint16_t*>(p)[i]);
  case DType::BF16:
    return bf16_to_float(static_cast<const uint16_t*>(p)[i]);
  case DType::F32:
    return static_cast<const float*>(p)[i];
  case DType::F64:
    return static_cast<const double*>(p)[i];
  }
  return 0;
}

namespace {

// C++ leaves out-of-range float-to-int conversion undefined; saturate instead (NaN is 0).
int64_t float_to_int(double x) {
  if (std::isnan(x)) return 0;
  if (x >= 9.2233720368547758e18) return INT64_MAX;
  if (x <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(x);
}

} // namespace

int64_t load_i(const Value& v, int64_t i) {
  const void* p = v.tensor->data();
  switch (v.dtype) {
  case DType::Bool:
    return static_cast<const uint8_t*>(p)[i] ? 1 : 0;
  case DType::I8:
    return static_cast<const int8_t*>(p)[i];
  case DType::I32:
    return static_cast<const int32_t*>(p)[i];
  case DType::I64:
    return static_cast<const int64_t*>(p)[i];
  default:
    return float_to_int(load_f(v, i));
  }
}

void store_f(Value& v, int64_t i, double x) {
  void* p = v.tensor->data();
  switch (v.dtype) {
  case DType::F16:
    static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(x));
    return;
  case DType::BF16:
    static_cast<uint16_t*>(p)[i] = float_to_bf16(static_cast<float>(x));
    return;
  case DType::F32:
    static_cast<float*>(p)[i] = static_cast<float>(x);
    return;
  case DType::F64:
    static_cast<double*>(p)[i] = x;
    return;
  case DType::Bool:
    static_cast<uint8_t*>(p)[i] = x != 0.0;
    return;
  default:
    store_i(v, i, float_to_int(x));
  }
}

void store_i(Value& v, int64_t i, int64_t x) {
  void* p = v.tensor->data();
  switch (v.dtype) {
  case DType::Bool:
    static_cast<uint8_t*>(p)[i] = x != 0;
    return;
  case DType::I8:
    static_cast<int8_t*>(p)[i] = static_cast<int8_t>(x);
    return;
  case DType::I32:
    static_cast<int32_t*>(p)[i] = static_cast<int32_t>(x);
    return;
  case DType::I64:
    static_cast<int64_t*>(p)[i] = x;
    return;
  default:
    store_f(v, i, static_cast<double>(x));
  }
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string type_string(DType dtype, const std::vector<int64_t>& shape) {
  return ir::dtype_name(dtype) + shape_string(shape);
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::optional<int64_t> as_int(const Value& v) {
  if (v.kind == Value::Kind::Shape && v.dims.size() == 1) return v.dims[0];
  if (v.is_tensor() && v.numel() == 1 && v.tensor->rank() == 0 && !ir::is_float(v.dtype))
    return load_i(v, 0);
  return std::nullopt;
}

std::optional<double> as_float(const Value& v) {
  if (v.kind == Value::Kind::Shape && v.dims.size() == 1) return static_cast<double>(v.dims[0]);
  if (v.is_tensor() && v.numel() == 1 && v.tensor->rank() == 0) return load_f(v, 0);
  return std::nullopt;
}

std::optional<bool> as_bool(const Value& v) {
  if (v.is_tensor() && v.numel() == 1 && v.tensor->rank() == 0 && v.dtype == DType::Bool)
    return load_i(v, 0) != 0;
  return std::nullopt;
}

std::optional<std::pair<int64_t, int64_t>> as_int_pair(const Value& v) {
  if (v.kind == Value::Kind::Shape && v.dims.size() == 2) return std::pair{v.dims[0], v.dims[1]};
  if (std::optional<int64_t> i = as_int(v)) return std::pair{*i, *i};
  return std::nullopt;
}

std::optional<size_t> normalize_axis(int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

} // namespace dsc::reference
