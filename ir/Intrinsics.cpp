#include "ir/Intrinsics.h"

#include <cmath>

namespace dsc::ir {

const std::vector<IntrinsicDef>& all_intrinsics() {
  static const std::vector<IntrinsicDef> table = {
#define DSC_INTRINSIC(name, arity, domain, purity, cost, cpu, llvm, cuda_f32, cuda_f64, cuda_int,  \
                      reference, reference_int)                                                    \
  IntrinsicDef{IntrinsicId::name,                                                                  \
               #name,                                                                              \
               arity,                                                                              \
               IntrinsicDomain::domain,                                                            \
               Purity::purity,                                                                     \
               Cost::cost,                                                                         \
               CpuLowering::cpu,                                                                   \
               llvm,                                                                               \
               cuda_f32,                                                                           \
               cuda_f64,                                                                           \
               cuda_int,                                                                           \
               reference,                                                                          \
               reference_int},
#include "ir/Intrinsics.def"
  };
  return table;
}

const IntrinsicDef& intrinsic(IntrinsicId id) {
  return all_intrinsics()[static_cast<size_t>(id)];
}

const IntrinsicDef* find_intrinsic(std::string_view name) {
  for (const IntrinsicDef& d : all_intrinsics())
    if (name == d.name) return &d;
  return nullptr;
}

} // namespace dsc::ir
