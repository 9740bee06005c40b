#pragma once
// Which machine the CPU backend compiles for: an ir::Target resolved to an LLVM triple, CPU
// name and feature string, and the TargetMachines built from them. The JIT and the `.so`
// path use the same resolution, so both run the same code.

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <optional>
#include <string>

#include "backends/cpu/CpuBackend.h"

namespace dsc::cpu {

struct ResolvedTarget {
  std::string triple;   // the process's triple ("x86_64-pc-linux-gnu")
  std::string cpu;      // an LLVM CPU name ("sapphirerapids", "x86-64")
  std::string features; // "+avx2,+fma,-avx512f,..."
  int opt_level = 3;
  // 0: the CPU's preference; else the "prefer-vector-width" of every function (by default
  // 512 for a native CPU with AVX-512, resolve_target)
  int vector_width = 0;
  int index_bits = 64;  // of kernels' index arithmetic (CpuKernel.h)
  llvm::CodeGenOptLevel codegen_level = llvm::CodeGenOptLevel::Aggressive;
  // The target whose device runs the prims (HostDevice.h): the CPU target itself, or another
  // (CUDA), whose host code is for the CPU above.
  ir::Target device;
};

// Registers the native target with LLVM (once per process; thread-safe).
void initialize_native_target();

// False with `*error` set for an opt_level outside 0..3, a vector width other than 0, 128, 256
// or 512, an index width other than 32 or 64, or a CPU or feature name LLVM does not know.
bool resolve_target(const ir::Target& options, ResolvedTarget* out, std::string* error);

// A TargetMachine for position-independent code (what a `.so` needs; the JIT takes it too).
std::unique_ptr<llvm::TargetMachine> create_target_machine(const ResolvedTarget& target,
                                                           std::string* error);

// The same machine for ORC.
llvm::orc::JITTargetMachineBuilder jit_target_machine_builder(const ResolvedTarget& target);

} // namespace dsc::cpu
