#pragma once
// One LLVM module for a whole dsc module: a kernel per prim (CpuKernel.h), a host
// function per host program (HostCodegen.h), optionally the `dsc_manifest` string a `.so`
// exports; then verified, and optimized by LLVM's default pipeline for the target machine.

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/HostProgram.h"
#include "ir/Module.h"
#include "runtime/Manifest.h"

namespace llvm {
class PipelineTuningOptions;
} // namespace llvm

namespace dsc::cpu {

struct ResolvedTarget; // TargetSelection.h

struct LlvmModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

// Builds and verifies the module for `tm` (its triple and data layout; every function gets its
// CPU and features as attributes, and "prefer-vector-width" when `target.vector_width` is not 0;
// kernels get `target.index_bits` wide index arithmetic). Only the host functions, and
// `dsc_manifest` when `manifest_json` is given, keep external linkage; kernels and everything
// else are internal. False with `*error` set when a kernel or host function cannot
// be emitted or the verifier rejects the result.
bool build_llvm_module(const ir::Module& m, const std::vector<ir::HostProgram>& hosts,
                       llvm::TargetMachine& tm, const ResolvedTarget& target, const std::string* manifest_json,
                       LlvmModule* out, std::string* error);

// How many times this process has called build_llvm_module: every compilation of a model
// (jit_compile, build_shared_library, emit_llvm_ir) builds one module, and running a model at
// a new shape builds none.
uint64_t llvm_modules_built();

// LLVM's default O0..O3 pipeline with the target machine's cost model (vector widths), loop and
// SLP vectorization from O2 on.
void optimize_llvm_module(llvm::Module& module, llvm::TargetMachine& tm, int opt_level);
// The same pipeline with `tuning` as given (KernelJit keeps LLVM's defaults).
void optimize_llvm_module(llvm::Module& module, llvm::TargetMachine& tm, int opt_level,
                          const llvm::PipelineTuningOptions& tuning);

// The module as LLVM assembly text.
std::string llvm_module_text(const llvm::Module& module);

} // namespace dsc::cpu
