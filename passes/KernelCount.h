#pragma once
// How many kernels a function runs per call, counted one way for every report (`dscc build`'s
// summary line, `dscc check --explain-fusion` and the REPL's `:fusion`): one per call site in
// its legalized body of a prim (a generated kernel) or of a library routine, branches and loop
// bodies included, so that both variants of a guarded fusion count. An epilogue runs inside its
// library call and is no kernel of its own; a shape-bucket variant (bucket_kernels) is another
// compiled form of its kernel, picked by the host, and is not called from the body.

#include <cstddef>
#include <functional>
#include <string>

#include "ir/Module.h"

namespace dsc::passes {

struct KernelCount {
  size_t generated = 0;     // call sites of prims
  size_t library = 0;       // call sites of library routines
  size_t with_epilogue = 0; // of those, the calls whose routine runs an epilogue prim
  size_t total() const { return generated + library; }
  KernelCount& operator+=(const KernelCount& other) {
    generated += other.generated;
    library += other.library;
    with_epilogue += other.with_epilogue;
    return *this;
  }
};

// The kernels `body` calls; `find` gives the declaration a callee names (null for ops and
// anything else that is no kernel).
KernelCount count_kernels(const ir::Expr& body,
                          const std::function<const ir::Module::Decl*(const std::string&)>& find);

} // namespace dsc::passes
