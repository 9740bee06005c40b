#pragma once
// The CPU's `parallel` loops: outlining onto the runtime's thread pool (CpuKernel.h has the
// semantics). Internal to backends/cpu.

#include "backends/llvm/KernelEmitter.h"

namespace dsc::cpu {

// Emits the perfect nest of parallel loops that starts at `outer` as a call of
// dsc_rt_parallel_for on a body outlined into "NAME.parallel.K", K = `outlined_index`.
// `emit_body` emits the nest's innermost body inside the outlined function (the caller marks
// it as parallel, so that loops inside run serially).
void emit_parallel(llvmgen::KernelEmitter& e, const ir::For& outer, int outlined_index,
                   const std::function<void(const ir::Stmt& body)>& emit_body);

} // namespace dsc::cpu
