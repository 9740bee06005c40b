#pragma once
// The CPU backend's public API: a module's prims and its host programs (ir/HostProgram.h)
// compiled by LLVM 19 either into this process (ORC LLJIT) or into a `.so` that
// runtime::load_shared_library and plain C programs (dsc_runtime.h) load.
//
// Every PrimFunc of the module becomes a kernel (runtime/HostABI.h) named kernel_symbol(name),
// internal to the compiled code; every HostProgram becomes an exported host function named
// host_symbol(name). One LLVM module holds them all; it is optimized with the target's own
// TargetMachine (so the vectorizer sees the real vector width) at `opt_level`.
//
// The manifest: each host program's FunctionInfo in `manifest` (matched by name) gets its
// `host_symbol` filled in; a host program the manifest does not list is added to it, as
// describe_host_program makes it. A manifest function with no host program, or whose number
// of params or outputs differs from its program's, is an error.
//
// Errors at compile time (an unknown prim, an unbound symbol, a malformed host program, an
// LLVM verifier failure, an unknown CPU, a linker failure) come back as null/false/"" with a
// message in `*error` (when `error` is not null); they never abort.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/HostProgram.h"
#include "ir/Module.h"
#include "ir/Target.h"
#include "runtime/Manifest.h"
#include "runtime/Model.h"

namespace dsc::cpu {

// "dsc_host_<name>" and "dsc_kernel_<name>"; characters other than [A-Za-z0-9_] become '_'.
// Two functions whose names differ only in such characters are a compile-time error.
std::string host_symbol(const std::string& fn_name);
std::string kernel_symbol(const std::string& prim_name);

// The manifest entry of a host program: its params (name, dtype, dims as text), its outputs
// ("output0", ... from its Output buffers, by output index), arena and peak bytes as text, and
// host_symbol(name).
runtime::FunctionInfo describe_host_program(const ir::HostProgram& program);

// Compiles into this process. The model owns the JIT and the (completed) manifest;
// host_function(name) is the compiled host_symbol(name). Null with `*error` set on failure.
std::unique_ptr<runtime::Model> jit_compile(const ir::Module& m,
                                            const std::vector<ir::HostProgram>& hosts,
                                            runtime::Manifest manifest,
                                            const ir::Target& target, std::string* error);

// Writes a position-independent object with the same code plus an exported
// `const char dsc_manifest[]` (runtime::to_json of the completed manifest), and links it with
// the system C compiler (`cc`, found on PATH) into the shared library `out_path`, against
// libdsc_runtime.so (runtime_library_dir(), also its rpath). Only the host functions and
// dsc_manifest are exported. False with `*error` set (the linker's output included) on failure;
// temporary files are removed either way.
bool build_shared_library(const ir::Module& m, const std::vector<ir::HostProgram>& hosts,
                          runtime::Manifest manifest, const ir::Target& target,
                          const std::string& out_path, std::string* error);

// The LLVM IR as text (what build_shared_library compiles), before or after the optimizer;
// "" with `*error` set on failure. For `--print-after` and tests.
std::string emit_llvm_ir(const ir::Module& m, const std::vector<ir::HostProgram>& hosts,
                         runtime::Manifest manifest, const ir::Target& target, bool optimized,
                         std::string* error);

// How many models this process has compiled (jit_compile, build_shared_library, emit_llvm_ir
// each count one); a compiled model runs at every shape without compiling again.
uint64_t models_compiled();

// For linking and compiling programs against built models: the directory of the
// libdsc_runtime.so this process loaded (the build tree's, or an installed package's), and the one to put on the include path for
// `#include "runtime/dsc_runtime.h"`.
std::string runtime_library_dir();
std::string runtime_include_dir();

} // namespace dsc::cpu
