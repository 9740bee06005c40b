#pragma once
// What the compiler compiles for. One Target travels through the whole pipeline:
//   - legalize asks which library routines it offers (blas.sgemm on the CPU), and refuses the
//     dtypes it does not compute (Target::arithmetic);
//   - schedule asks which loop kinds it may use, and the verifier rejects the others
//     (a `block_x` loop on the CPU, a `parallel` loop on CUDA);
//   - lower_host turns library calls into the target's routine steps;
//   - the backend reads the rest: the CPU's name and features and its vector width, or the
//     CUDA architectures.
//
// Library routines are listed once, in ir/LibraryRoutines.def (ir/LibraryRoutine.h).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/IR.h"

namespace dsc::ir {

struct LibraryRoutine;
enum class RoutineRole : uint8_t;

// The kinds of target (ir/TargetKinds.def).
enum class TargetKind : uint8_t {
#define DSC_TARGET_KIND(Enum, name, dl_device, device_noun, native, widened) Enum,
#include "ir/TargetKinds.def"
};

const char* target_kind_name(TargetKind kind); // "cpu", "cuda"
const char* target_device_noun(TargetKind kind); // "CPU", "GPU": for messages
// The kind spelled `name`, or nullopt.
std::optional<TargetKind> target_kind_named(std::string_view name);
// Every kind, in table order, and their names for messages ("cpu or cuda").
const std::vector<TargetKind>& all_target_kinds();
std::string target_kind_names();

// How a target computes a dtype (ir/TargetKinds.def's `native` and `widened` columns).
enum class Arithmetic : uint8_t {
  Native,      // in the dtype's own precision
  Widened,     // held in memory as the dtype, computed in f32
  Unsupported, // legalize refuses it on this target
};

struct Target {
  TargetKind kind = TargetKind::Cpu;
  // CPU: "native" (this machine's CPU and features, AVX-512 where present), "generic"
  // (baseline x86-64, SSE2 only), or an LLVM CPU name ("skylake-avx512", "znver3").
  std::string cpu = "native";
  // CPU: extra LLVM subtarget features applied after the CPU's ("-avx512f,+fma").
  std::string features;
  // CPU: the widest vectors (bits) the vectorizers use. 0 keeps the CPU's preference (LLVM
  // prefers 256 on most AVX-512 CPUs); else 128, 256 or 512.
  int vector_bits = 0;
  // 0 to 3, as clang's -O0 .. -O3.
  int opt_level = 3;
  // CUDA: the SM architectures to compile kernels for (80 = sm_80).
  std::vector<int> sm_archs;
  // The integer width of loop indices and element offsets in kernels.
  int index_bits = 64;

  // Whether the code generator of this target runs loops of `kind` (ir/ForKinds.def).
  bool runs(ForKind kind) const;
  // How its code computes `dtype`.
  Arithmetic arithmetic(DType dtype) const;
  // The dtypes it computes, natively or widened, for messages ("bool, i8, ... and f64").
  std::string computed_dtype_names() const;
  // Whether library routine `symbol` ("blas.sgemm") has an implementation on this target.
  bool offers(std::string_view symbol) const;
  bool offers(const LibraryRoutine& routine) const;
  // The routine of `role` over `dtype` legalize picks unless the user names another (the
  // table's `preferred` column): f32 Matmul is dsc.sgemm on the CPU and cublas.sgemm on CUDA,
  // bf16 and f16 dsc.gemm_bf16 and dsc.gemm_f16 on the CPU, Conv2d dsc.conv2d and
  // cudnn.conv2d. Null when the target has none.
  const LibraryRoutine* preferred_routine(RoutineRole role, DType dtype = DType::F32) const;
  // "cpu (native)", "cpu (znver3, 512-bit vectors)", "cuda (sm_80, sm_90)".
  std::string describe() const;
};

// CUDA: the most threads a block of any kernel has. The GPU schedule makes blocks of it
// (passes/GpuSchedule.h), and the CUDA C emitter declares it as each kernel's launch bound.
constexpr int64_t kGpuThreadsPerBlock = 256;

// The defaults of `dscc build`: this machine's CPU, or CUDA for sm_80 and sm_90; and the
// default of any kind (`--target=NAME`).
Target cpu_target();
Target cuda_target();
Target default_target(TargetKind kind);

} // namespace dsc::ir
