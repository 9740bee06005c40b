#pragma once
// Whether two tensors are the same bytes of the same dtype and shape: the round-trip check of the
// loader fuzz targets (a tensor that reads must write and read back unchanged).

#include <cstring>

#include "runtime/Tensor.h"

namespace dsc::fuzz {

inline bool same_tensor(const runtime::Tensor& a, const runtime::Tensor& b) {
  return runtime::same_dtype(a.dtype(), b.dtype()) && a.shape() == b.shape() &&
         a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0);
}

} // namespace dsc::fuzz
