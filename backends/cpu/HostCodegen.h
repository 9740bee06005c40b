#pragma once
// An ir::HostProgram to one LLVM function with runtime/HostABI.h's host ABI:
//   int32_t HOST(dsc_call* call, const DLTensor* const* inputs);
// It checks every input with dsc_rt_check_input, binds and checks dims, checks the `checks`
// (a failure calls dsc_rt_fail_dim / dsc_rt_fail_check and returns their result), takes the
// arena and allocates the outputs (a null from the runtime returns 1), runs the steps (kernel
// calls, dsc_rt_matmul_f32, memcpy) and returns 0.

#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <string>

#include "backends/cuda/CudaSource.h"
#include "ir/HostProgram.h"
#include "ir/Module.h"

namespace dsc::cpu {

// The symbol of the kernel compiled for a prim of the module (runtime/HostABI.h's kernel
// ABI), or "" when there is none. A symbol, not an llvm::Function: the host calls kernels by
// name, whichever backend compiled them and into whichever module (a GPU backend's kernels
// are launched, not called).
using KernelLookup = std::function<std::string(const std::string& prim_name)>;

// Kernels compiled for a GPU, which the host launches (dsc_rt_cuda_launch) instead of calling:
// the embedded dsc_cuda_module, and each prim's kernel and launch shape. With it, library
// steps call the GPU's routines and copies are device copies (dsc_rt_cuda_copy).
struct GpuLaunches {
  llvm::GlobalVariable* module = nullptr;
  const std::map<std::string, cuda::KernelLaunch>* launches = nullptr; // by prim name
};

// Emits host_symbol(program.name) into `out` (external linkage). `m` is the module whose prims
// the program's Kernel steps call; a kernel `out` does not define yet is declared there. Null with `*error` set when the program is malformed (a
// buffer, param or axis out of range, a symbol no dim binds, an unknown prim or a call that
// does not match its signature, an output index missing or repeated).
llvm::Function* emit_host_function(llvm::Module& out, const ir::Module& m,
                                   const ir::HostProgram& program, const KernelLookup& kernel,
                                   std::string* error, const GpuLaunches* gpu = nullptr);

} // namespace dsc::cpu
