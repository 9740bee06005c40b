#pragma once
// Turning a finished LLVM module into a `.so`: an ELF object written with the target machine,
// linked by the system C compiler against libdsc_runtime.so.

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <string>
#include <vector>

namespace dsc::cpu {

// Writes `module` as an object file (the target machine's relocation model; PIC for a `.so`).
bool write_object_file(llvm::Module& module, llvm::TargetMachine& tm, const std::string& path,
                       std::string* error);

// `cc -shared -o OUT OBJECT -L<runtime_dir> -ldsc_runtime -Wl,-rpath,<runtime_dir> -lm`, with
// undefined symbols an error at link time rather than at load time. False with `*error` set,
// including what the linker printed, on failure.
bool link_shared_library(const std::string& object_path, const std::string& out_path,
                         const std::string& runtime_dir, std::string* error);

// write_object_file into a temporary file, then link_shared_library; the object is removed
// either way.
bool emit_shared_library(llvm::Module& module, llvm::TargetMachine& tm, const std::string& out_path,
                         const std::string& runtime_dir, std::string* error);

// Runs argv[0] (found on PATH) with stdin from /dev/null and stdout and stderr captured into
// `*output`; returns its exit status, or -1 with `*output` saying why it could not run or
// how it ended (a signal).
int run_process(const std::vector<std::string>& argv, std::string* output);

} // namespace dsc::cpu
