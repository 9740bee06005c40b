#pragma once
// The reference interpreter's values and the helpers its op families share. Internal to
// backends/reference.
//
// Semantics: every float op computes in double and rounds once when it stores into the
// result's dtype (f16 and bf16 go through f32, round-to-nearest-even). Integer ops compute in
// int64 (`div` is floor division, as in Python; division by zero gives 0). A literal is a
// "weak" rank-0 tensor (i64, f64 or bool) that adopts the other operand's dtype, as in the
// shape rules.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/DLDataType.h"
#include "ir/Type.h"
#include "runtime/Tensor.h"
#include "support/HalfFloat.h"

namespace dsc::reference {

struct Value {
  enum class Kind : uint8_t { None, Tensor, Tuple, Shape, Str, List };
  Kind kind = Kind::None;
  std::shared_ptr<runtime::Tensor> tensor; // Tensor
  ir::DType dtype = ir::DType::F32;        // Tensor
  bool weak = false;                       // Tensor: a literal that adopts the other dtype
  std::vector<Value> items;                // Tuple, List
  std::vector<int64_t> dims;               // Shape
  std::string str;                         // Str

  bool is_tensor() const { return kind == Kind::Tensor; }
  const runtime::Tensor& t() const { return *tensor; }
  const std::vector<int64_t>& shape() const { return tensor->shape(); }
  int64_t numel() const { return tensor->numel(); }
};

// Ops report errors by returning nullopt after setting `error`.
using Result = std::optional<Value>;
struct OpError {
  std::string message;
};

using ir::from_dl;
using ir::to_dl;

Value make_tensor(ir::DType dtype, std::vector<int64_t> shape);
Value make_tuple(std::vector<Value> items);
Value weak_int(int64_t v);
Value weak_float(double v);
Value weak_bool(bool v);
// The same data converted to `dtype` (not weak); `v` itself when it already is that.
Value convert(const Value& v, ir::DType dtype);

// Element access by flat index, converting through double or int64.
double load_f(const Value& v, int64_t i);
int64_t load_i(const Value& v, int64_t i);
void store_f(Value& v, int64_t i, double x);
void store_i(Value& v, int64_t i, int64_t x);

// f16/bf16 bit conversions (round to nearest even): support/HalfFloat.h's.
using dsc::bf16_to_float;
using dsc::float_to_bf16;
using dsc::float_to_half;
using dsc::half_to_float;

// "f32[2, 3]"
std::string type_string(ir::DType dtype, const std::vector<int64_t>& shape);
std::string shape_string(const std::vector<int64_t>& shape);
// Row-major strides of a shape.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);
int64_t product(const std::vector<int64_t>& shape);

// Scalar attribute arguments: a weak or rank-0 tensor, or a one-dim Shape.
std::optional<int64_t> as_int(const Value& v);
std::optional<double> as_float(const Value& v);
std::optional<bool> as_bool(const Value& v);
// An int or a two-dim Shape (conv2d's and the pools' stride, padding, ...), as (h, w).
std::optional<std::pair<int64_t, int64_t>> as_int_pair(const Value& v);
// An axis in [-rank, rank) normalized; nullopt when out of range.
std::optional<size_t> normalize_axis(int64_t axis, size_t rank);

// The op families. `args` are bound to the op's parameters in signature order; absent
// optional parameters are Kind::None.
Result eval_elementwise(const std::string& op, const std::vector<Value>& args, OpError& err);
Result eval_reduce(const std::string& op, const std::vector<Value>& args, OpError& err);
Result eval_layout(const std::string& op, const std::vector<Value>& args, OpError& err);
Result eval_linalg(const std::string& op, const std::vector<Value>& args, OpError& err);
Result eval_pool(const std::string& op, const std::vector<Value>& args, OpError& err);
Result eval_creation(const std::string& op, const std::vector<Value>& args, OpError& err);

} // namespace dsc::reference
