#pragma once
// Compiling an LLVM module into this process with ORC's LLJIT, as a runtime::Model.
//
// The compiled code calls the runtime's dsc_rt_* functions (runtime/HostABI.h), which resolve
// to this process's copies by explicit address, and libc/libm (memcpy, memset, expf, ...),
// which resolve through LLJIT's generator over the process's own symbols.

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>

#include <memory>
#include <string>

#include "runtime/Manifest.h"
#include "runtime/Model.h"

namespace dsc::cpu {

// Compiles `module` (already optimized; its data layout must be the builder's) for the
// machine `jtmb` describes and looks up every manifest function's host_symbol. The model owns
// the JIT (and so the code) and the manifest. Null with `*error` set when LLJIT cannot be
// created, the module does not link (an unresolved symbol) or a host function is missing.
std::unique_ptr<runtime::Model> jit_model(llvm::orc::JITTargetMachineBuilder jtmb,
                                          llvm::orc::ThreadSafeModule module,
                                          runtime::Manifest manifest, std::string* error);

} // namespace dsc::cpu
