#pragma once
// An ir::HostProgram to one LLVM function with runtime/HostABI.h's host ABI:
//   int32_t HOST(dsc_call* call, const DLTensor* const* inputs);
// It checks every input with dsc_rt_check_input, binds and checks dims, checks the `checks`
// (a failure calls dsc_rt_fail_dim / dsc_rt_fail_check and returns their result), takes the
// arena and allocates the outputs (a null from the runtime returns 1), runs the steps (kernels,
// library routines and copies, each as the device says) and returns 0.

#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>

#include <string>

#include "backends/cpu/HostDevice.h"
#include "ir/HostProgram.h"
#include "ir/Module.h"

namespace dsc::cpu {

// Emits host_symbol(program.name) into `out` (external linkage). `m` is the module whose prims
// the program's Kernel steps run, on `device` (HostDevice.h), whose begin_module has run on
// `out`. Null with `*error` set when the program is malformed (a buffer, param or axis out of
// range, a symbol no dim binds, an unknown prim or a call that does not match its signature,
// an output index missing or repeated).
llvm::Function* emit_host_function(llvm::Module& out, const ir::Module& m,
                                   const ir::HostProgram& program, const HostDevice& device,
                                   std::string* error);

} // namespace dsc::cpu
