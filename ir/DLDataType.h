#pragma once
// ir::DType as DLPack's DLDataType, the element type of tensors at the runtime's C ABI (the
// reference interpreter's tensors, the checks and outputs of compiled host code). Both
// directions expand the dtype table (ir/DTypes.def), so there is nothing to keep in step.
// Header-only: it needs dlpack.h, which ir/Type.h does not want to drag into every user.

#include <dlpack/dlpack.h>

#include <optional>

#include "ir/Type.h"

namespace dsc::ir {

constexpr DLDataType to_dl(DType d) {
  switch (d) {
#define DSC_DTYPE(Enum, name, bits, dl_code, is_float, is_int, npy, safetensors, compute,      \
                  tolerance)                                                                       \
  case DType::Enum:                                                                                \
    return DLDataType{static_cast<uint8_t>(dl_code), bits, 1};
#include "ir/DTypes.def"
  }
  return DLDataType{kDLFloat, 32, 1};
}

// nullopt for the DLPack types dsc does not use (uint16, complex, vector lanes).
constexpr std::optional<DType> from_dl(DLDataType d) {
  for (DType c : kAllDTypes) {
    DLDataType t = to_dl(c);
    if (t.code == d.code && t.bits == d.bits && t.lanes == d.lanes) return c;
  }
  return std::nullopt;
}

} // namespace dsc::ir
