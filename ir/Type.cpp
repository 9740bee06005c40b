#include "ir/Type.h"

#include <sstream>

#include "symbolic/Printer.h"

namespace dsc::ir {

namespace {
struct DTypeInfo {
  const char* name;
  int bits;
  bool is_float;
  bool is_int;
  DType compute;
  double tolerance;
};
// Indexed by the enumerator: both come from the same table in the same order.
constexpr DTypeInfo kDTypes[] = {
#define DSC_DTYPE(Enum, name, bits, dl_code, is_float, is_int, npy, safetensors, compute,      \
                  tolerance)                                                                       \
  {name, bits, is_float, is_int, DType::compute, tolerance},
#include "ir/DTypes.def"
};

const DTypeInfo& info(DType d) {
  return kDTypes[static_cast<size_t>(d)];
}
} // namespace

const char* dtype_name(DType d) {
  return info(d).name;
}
int dtype_bits(DType d) {
  return info(d).bits;
}
DType compute_dtype(DType d) {
  return info(d).compute;
}
double dtype_tolerance(DType d) {
  return info(d).tolerance;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : kAllDTypes)
    if (name == info(d).name) return d;
  return std::nullopt;
}

std::vector<std::string> dtype_names() {
  std::vector<std::string> names;
  for (DType d : kAllDTypes)
    names.push_back(info(d).name);
  return names;
}

bool is_float(DType d) {
  return info(d).is_float;
}
bool is_int(DType d) {
  return info(d).is_int;
}
int literal_kind_rank(DType weak) {
  return weak == DType::Bool ? 0 : is_int(weak) ? 1 : 2;
}
bool weak_fits(DType weak, DType strong) {
  switch (literal_kind_rank(weak)) {
  case 0:
    return strong == DType::Bool;
  case 1:
    return strong != DType::Bool;
  default:
    return is_float(strong);
  }
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
