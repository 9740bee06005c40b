#pragma once
// Constant weights, packed once. Memory declared constant (dsc_declare_constant in
// runtime/dsc_runtime.h: the caller promises not to change it until it releases it) is
// remembered here; a product whose B lies inside it is packed on first use, in the layout of
// packed_b_offset (runtime/gemm/Packing.h), and later products with the same B, layout and
// kernels reuse the pack, as an inference engine packs its initializers once. Other forms of a
// constant are kept the same way (constant_form: a 16-bit B transposed for the decode path,
// runtime/gemm/HalfGemm.cpp). Releasing the memory frees its forms (a product already using one
// keeps it alive until it ends).
//
// Thread-safe: lookups share a lock, the first pack of a matrix takes it alone.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/gemm/Gemm.h"

namespace dsc::runtime::gemm {

// False with `*error` set for null or empty memory, or memory overlapping a declared range.
bool declare_constant(const void* data, size_t bytes, std::string* error);
// Forgets the range that starts at `data` and frees its packs; false when there is none.
bool release_constant(const void* data);
// Whether all of [data, data + bytes) lies in one declared range.
bool is_constant(const void* data, size_t bytes);
// How many packs and other forms exist (for tests).
size_t constant_pack_count();

// Which form of a constant matrix: its memory, shape and strides, and what made the form (the
// kernels and pack function of a pack; a tag of the caller's for another form).
struct ConstantFormKey {
  const void* data;
  int64_t n, k, row, col;
  const void* maker;
  uintptr_t variant; // a pack function's address, a dtype, ...
  bool operator<(const ConstantFormKey& o) const;
};

// The form `key` names of the constant memory [key.data, key.data + bytes): made by `make` on
// first use (null from it: no memory for it, nothing kept) and kept until the memory is
// released. Null when the memory is not all in one declared range.
std::shared_ptr<const void> constant_form(const ConstantFormKey& key, size_t bytes,
                                          const std::function<std::shared_ptr<const void>()>& make);

// B of `p` packed for `kernels`, when all of B lies in declared constant memory (B's memory, or
// the memory its PanelSource names); else null.
std::shared_ptr<const float[]> constant_pack(const GemmKernels& kernels, const Product& p);

} // namespace dsc::runtime::gemm
