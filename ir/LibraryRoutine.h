#pragma once
// Library routines (ir/LibraryRoutines.def): what an `extern fn ... = "symbol"` binds, who
// offers it, and how the host program calls it. Adding a routine is one line in the .def, its
// scalar-argument function here, and its runtime function.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Target.h"
#include "ir/Type.h"
#include "symbolic/Expr.h"

namespace dsc::ir {

// The scalar arguments of one call, from its operands' and results' shapes (in the routine's
// buffer order); nullopt with `*error` set when the shapes are not ones the routine takes.
using ScalarArgsFn = std::optional<std::vector<symbolic::Expr>> (*)(
    const std::vector<std::vector<symbolic::Expr>>& shapes, std::string* error);

struct LibraryRoutine {
  const char* symbol;           // "blas.sgemm"
  TargetKind target;            // the target kind that offers it
  const char* runtime_function; // the runtime entry point the host code calls
  int buffers;                  // operands then results
  int scalars;                  // int64 arguments after the buffers
  DType dtype;                  // of every buffer
  ScalarArgsFn scalar_args;
  const char* summary;
};

// The routine bound to `symbol`, or null.
const LibraryRoutine* find_library_routine(std::string_view symbol);
const std::vector<LibraryRoutine>& all_library_routines();

} // namespace dsc::ir
