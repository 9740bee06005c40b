#include "ir/Type.h"

#include <sstream>

#include "symbolic/Printer.h"

namespace dsc::ir {

namespace {
struct DTypeInfo {
  DType dtype;
  const char* name;
  int bits;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::Bool, "bool", 8}, {DType::I8, "i8", 8},    {DType::I32, "i32", 32},
    {DType::I64, "i64", 64},  {DType::F16, "f16", 16}, {DType::BF16, "bf16", 16},
    {DType::F32, "f32", 32},  {DType::F64, "f64", 64},
};
} // namespace

const char* dtype_name(DType d) {
  return kDTypes[static_cast<int>(d)].name;
}
int dtype_bits(DType d) {
  return kDTypes[static_cast<int>(d)].bits;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& info : kDTypes)
    if (name == info.name) return info.dtype;
  return std::nullopt;
}

bool is_float(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32 || d == DType::F64;
}
bool is_int(DType d) {
  return d == DType::I8 || d == DType::I32 || d == DType::I64;
}

Type Type::tensor(DType dtype, std::vector<symbolic::Expr> shape) {
  Type t;
  t.kind = Kind::Tensor;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

Type Type::tuple(std::vector<Type> fields) {
  Type t;
  t.kind = Kind::Tuple;
  t.fields = std::move(fields);
  return t;
}

bool operator==(const Type& a, const Type& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
  case Type::Kind::Unknown:
  case Type::Kind::Any:
  case Type::Kind::Int:
  case Type::Kind::Float:
  case Type::Kind::Bool:
  case Type::Kind::Str:
    return true;
  case Type::Kind::Tensor:
    if (a.dtype != b.dtype || a.weak != b.weak || a.shape.size() != b.shape.size()) return false;
    for (size_t i = 0; i < a.shape.size(); ++i)
      if (!a.shape[i].same_as(b.shape[i])) return false;
    return true;
  case Type::Kind::Tuple:
    return a.fields == b.fields;
  }
  return false;
}

std::string to_string(const Type& t) {
  std::ostringstream os;
  switch (t.kind) {
  case Type::Kind::Unknown:
    return "?";
  case Type::Kind::Any:
    return "tensor";
  case Type::Kind::Int:
    return "int";
  case Type::Kind::Float:
    return "float";
  case Type::Kind::Bool:
    return "bool";
  case Type::Kind::Str:
    return "str";
  case Type::Kind::Tensor: {
    os << dtype_name(t.dtype) << "[";
    for (size_t i = 0; i < t.shape.size(); ++i)
      os << (i ? ", " : "") << t.shape[i];
    os << "]";
    return os.str();
  }
  case Type::Kind::Tuple:
    os << "(";
    for (size_t i = 0; i < t.fields.size(); ++i)
      os << (i ? ", " : "") << to_string(t.fields[i]);
    if (t.fields.size() == 1) os << ",";
    os << ")";
    return os.str();
  }
  return "?";
}

} // namespace dsc::ir
