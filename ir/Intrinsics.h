#pragma once
// The table of prim intrinsics (ir/Intrinsics.def): per name, its arity, operand domain,
// purity, cost, CPU lowering, CUDA spelling and reference implementation. ir::Intrinsic nodes name
// their function by string, so that a prim may call an effect the table does not know (the
// backend then reports it); everything that needs to know what a name means asks here.

#include <cstdint>
#include <string_view>
#include <vector>

namespace dsc::ir {

// One enumerator per row, named as the intrinsic is (as LLVM's Intrinsic::sqrt).
enum class IntrinsicId : uint8_t {
#define DSC_INTRINSIC(name, ...) name,
#include "ir/Intrinsics.def"
};

enum class IntrinsicDomain : uint8_t { Float, Number, Bool, Select, None };
enum class Purity : uint8_t { Pure, Effect };
// What evaluating it once more costs: fusion recomputes only Cheap intrinsics.
enum class Cost : uint8_t { Cheap, Costly };
enum class CpuLowering : uint8_t { Polynomial, LlvmIntrinsic, Inline, Nothing };

struct IntrinsicDef {
  IntrinsicId id;
  const char* name;
  int arity;
  IntrinsicDomain domain;
  Purity purity;
  Cost cost;
  CpuLowering cpu;
  const char* llvm; // the LLVM intrinsic of CpuLowering::LlvmIntrinsic ("llvm.sqrt"), else ""
  // CUDA C expressions with `$0`.. for the operands, per dtype class; "" where not accepted.
  const char* cuda_f32;
  const char* cuda_f64;
  const char* cuda_int;
  double (*reference)(const double* args);       // null for the Bool and None domains
  int64_t (*reference_int)(const int64_t* args); // null for the Float and None domains

  bool pure() const { return purity == Purity::Pure; }
};

// The row named `name`, or null.
const IntrinsicDef* find_intrinsic(std::string_view name);
const IntrinsicDef& intrinsic(IntrinsicId id);
// Every row, in table order.
const std::vector<IntrinsicDef>& all_intrinsics();

} // namespace dsc::ir
