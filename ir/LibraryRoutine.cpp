#include "ir/LibraryRoutine.h"

#include "ir/HostProgram.h"
#include "ir/Module.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::ir {

namespace {

using symbolic::Expr;

Expr product(const std::vector<Expr>& dims, size_t begin, size_t end) {
  Expr p = 1;
  for (size_t i = begin; i < end; ++i) p = p * dims[i];
  return symbolic::simplify(p);
}

// blas.sgemm, C = A @ B with batch dims. The batch is folded into m when B is a matrix, B is
// broadcast (stride 0) when A is, and otherwise A and B carry the same batch dims.
std::optional<std::vector<Expr>> sgemm_scalar_args(const std::vector<std::vector<Expr>>& shapes,
                                                   std::string* error) {
  const std::vector<Expr>& a = shapes[0];
  const std::vector<Expr>& b = shapes[1];
  if (a.size() < 2 || b.size() < 2) {
    *error = "BLAS matmul needs rank >= 2 operands";
    return std::nullopt;
  }
  Expr k = a[a.size() - 1], n = b[b.size() - 1];
  Expr batch, m, a_stride, b_stride;
  if (b.size() == 2) {
    batch = 1;
    m = product(a, 0, a.size() - 1);
    a_stride = 0;
    b_stride = 0;
  } else if (a.size() == 2) {
    batch = product(b, 0, b.size() - 2);
    m = a[0];
    a_stride = 0;
    b_stride = symbolic::simplify(k * n);
  } else if (a.size() == b.size()) {
    batch = product(a, 0, a.size() - 2);
    m = a[a.size() - 2];
    a_stride = symbolic::simplify(m * k);
    b_stride = symbolic::simplify(k * n);
  } else {
    *error = "BLAS matmul with batch dims of different ranks";
    return std::nullopt;
  }
  return std::vector<Expr>{batch, m, n, k, a_stride, b_stride, 0};
}

} // namespace

const std::vector<LibraryRoutine>& all_library_routines() {
  static const std::vector<LibraryRoutine> routines = {
#define DSC_LIBRARY_ROUTINE(symbol, target, runtime_function, epilogue_function, buffers, scalars, \
                            dtype, scalar_args, summary)                                         \
  {symbol,  TargetKind::target, runtime_function, epilogue_function,                             \
   buffers, scalars,            DType::dtype,     scalar_args,                                   \
   summary},
#include "ir/LibraryRoutines.def"
  };
  return routines;
}

std::string epilogue_rows_symbol(const PrimFunc& epilogue) {
  if (epilogue.outputs.size() != 1 || epilogue.outputs[0].shape.size() != 2) return "";
  const symbolic::Sym* rows = epilogue.outputs[0].shape[0].as<symbolic::Sym>();
  return rows ? rows->name : "";
}

std::string epilogue_mismatch(const ExternFunc& ext, const PrimFunc& prim) {
  const LibraryRoutine* routine = find_library_routine(ext.symbol);
  if (!routine || !routine->epilogue_function)
    return "routine \"" + ext.symbol + "\" takes no epilogue";
  if (ext.params.size() < 2 || prim.inputs.size() != ext.params.size() - 2)
    return "the epilogue takes " + std::to_string(prim.inputs.size()) +
           " inputs; the extern passes it its parameters after the first two (" +
           std::to_string(ext.params.size() < 2 ? 0 : ext.params.size() - 2) + ")";
  if (prim.outputs.size() != 1 || prim.outputs[0].shape.size() != 2 ||
      prim.outputs[0].dtype != routine->dtype)
    return std::string("the epilogue's one output is the result as a ") +
           dtype_name(routine->dtype) + " matrix [R, N]";
  const std::string rows = epilogue_rows_symbol(prim);
  if (rows.empty())
    return "the first dim of the epilogue's output, its row count, must be a symbol, not " +
           symbolic::to_string(prim.outputs[0].shape[0]);
  auto mentions_rows = [&](const symbolic::Expr& d) {
    for (const std::string& s : symbolic::free_symbols(d))
      if (s == rows) return true;
    return false;
  };
  if (mentions_rows(prim.outputs[0].shape[1]))
    return "the row count " + rows + " appears in the output's second dim";
  for (size_t k = 0; k < prim.inputs.size(); ++k) {
    const Buffer& in = prim.inputs[k];
    if (in.dtype != ext.params[k + 2]->type.dtype)
      return "epilogue input '" + in.name + "' is " + dtype_name(in.dtype) + ", but '" +
             ext.params[k + 2]->name + "' is " + dtype_name(ext.params[k + 2]->type.dtype);
    for (size_t a = 0; a < in.shape.size(); ++a)
      if ((a > 0 || !in.shape[a].same_as(prim.outputs[0].shape[0])) && mentions_rows(in.shape[a]))
        return "epilogue input '" + in.name + "' uses the row count " + rows +
               " other than as its first dim";
  }
  if (prim.inputs.size() + 1 > kMaxEpilogueBuffers)
    return "the epilogue has " + std::to_string(prim.inputs.size() + 1) +
           " buffers; at most " + std::to_string(kMaxEpilogueBuffers);
  if (prim_signature_symbols(prim).size() > kMaxEpilogueSymbols)
    return "the epilogue takes more than " + std::to_string(kMaxEpilogueSymbols) + " symbols";
  return "";
}

const LibraryRoutine* find_library_routine(std::string_view symbol) {
  for (const LibraryRoutine& r : all_library_routines())
    if (symbol == r.symbol) return &r;
  return nullptr;
}

} // namespace dsc::ir
