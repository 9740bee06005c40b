#pragma once
// Types of graph-level values.
//
// A tensor type is `dtype[d0, d1, ...]` whose dims are symbolic expressions (see
// symbolic/Expr.h); rank 0 (`f32[]`) is a scalar tensor. A tuple type groups the results of
// ops like `split`. `Unknown` is the type of a value before infer_shapes has run.
//
// Literals in graph code are "weak": `x * 0.125` takes x's dtype, as in NumPy's and JAX's
// scalar promotion, and their type says so.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbolic/Expr.h"

namespace dsc::ir {

// The element types, from the one dtype table (ir/DTypes.def).
enum class DType : uint8_t {
#define DSC_DTYPE(Enum, ...) Enum,
#include "ir/DTypes.def"
};

// Every dtype in the table's order, for lists of names and lookups by another key.
inline constexpr DType kAllDTypes[] = {
#define DSC_DTYPE(Enum, ...) DType::Enum,
#include "ir/DTypes.def"
};

const char* dtype_name(DType d); // "f32"
std::optional<DType> parse_dtype(std::string_view name);
// The names of all dtypes, for "did you mean" notes and keyword lists.
std::vector<std::string> dtype_names();
int dtype_bits(DType d); // in memory: bool is 8
// What `d`'s arithmetic runs in and its reductions and products accumulate in (f32 for f16 and
// bf16: ir/DTypes.def's `compute`), and how far a compiled result of `d` may be from the
// reference interpreter's, relative to max(1, |reference|) (its `tolerance`).
DType compute_dtype(DType d);
double dtype_tolerance(DType d);
bool is_float(DType d);
bool is_int(DType d); // the signed integer dtypes, not bool
// Literals are weak: `2` stands for any numeric dtype, `0.5` for any float, `true` for bool.
// The kind of literal a weak dtype holds (bool 0 < integer 1 < float 2), and whether a weak
// value of dtype `weak` may stand where `strong` is expected.
int literal_kind_rank(DType weak);
bool weak_fits(DType weak, DType strong);

struct Type {
  // Unknown: not inferred yet. Tensor, Tuple: values. Any: a generic `tensor` parameter of a
  // stdlib-style function, instantiated per call from the argument. Int, Float, Bool, Str:
  // compile-time attribute parameters (`axis: int = -1`), substituted per call.
  enum class Kind : uint8_t { Unknown, Tensor, Tuple, Any, Int, Float, Bool, Str };
  Kind kind = Kind::Unknown;
  DType dtype = DType::F32;               // Tensor
  std::vector<symbolic::Expr> shape;      // Tensor
  std::vector<Type> fields;               // Tuple
  bool weak = false;                      // Tensor: a literal's dtype that yields to the other operand

  static Type unknown() { return {}; }
  static Type tensor(DType dtype, std::vector<symbolic::Expr> shape);
  static Type scalar(DType dtype) { return tensor(dtype, {}); }
  static Type tuple(std::vector<Type> fields);
  static Type of_kind(Kind k) {
    Type t;
    t.kind = k;
    return t;
  }

  bool is_unknown() const { return kind == Kind::Unknown; }
  bool is_tensor() const { return kind == Kind::Tensor; }
  bool is_tuple() const { return kind == Kind::Tuple; }
  bool is_attribute() const {
    return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool || kind == Kind::Str;
  }
  size_t rank() const { return shape.size(); }
};

// Structural equality: dims compared as nodes (callers canonicalize first when they want
// value equality).
bool operator==(const Type& a, const Type& b);

// `f32[B, S, 768]`, `(f32[B, S], i64[])`, `tensor`, `int`, `float`, `bool`, `str`, and `?`
// for unknown.
std::string to_string(const Type& t);

} // namespace dsc::ir
