#pragma once
// Prims compiled to machine code in this process: the kernels of CpuKernel.h, optimized
// for the host CPU (O3 by default) and loaded with ORC LLJIT. For tests and benchmarks of
// kernel code generation, which need no host program; whole models go through the JIT of
// CpuBackend.h. The header does not expose LLVM.
//
// Kernels call the runtime's dsc_rt_parallel_for (runtime/ThreadPool.cpp), malloc/free and
// libm from this process.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/Module.h"

namespace dsc::cpu {

using KernelFunction = void (*)(void* const* buffers, const int64_t* symbols);

struct KernelJitOptions {
  int opt_level = 3;   // 0 to 3
  int index_bits = 64; // 32 or 64: the width of index arithmetic (ir::Target::index_bits)
};

class KernelJit {
public:
  ~KernelJit();
  KernelJit(const KernelJit&) = delete;
  KernelJit& operator=(const KernelJit&) = delete;

  // Emits each prim as a kernel (checked with check_kernel, then verified), optimizes, and
  // JITs them. Null with `error` set on failure.
  static std::unique_ptr<KernelJit> compile(const std::vector<Ref<ir::PrimFunc>>& prims, std::string& error,
                                            const KernelJitOptions& options = {});

  // The kernel of the prim called `name`, or null.
  KernelFunction kernel(const std::string& name) const;
  // The module as emitted, and after optimization.
  const std::string& emitted_ir() const;
  const std::string& optimized_ir() const;
  // Warnings LLVM reported while optimizing (a `vectorize` loop the vectorizer
  // could not vectorize, say), one per line.
  const std::string& diagnostics() const;

private:
  KernelJit();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace dsc::cpu
