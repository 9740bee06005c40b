#include "ir/LibraryRoutine.h"

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
#define DSC_LIBRARY_ROUTINE(symbol, target, runtime_function, buffers, scalars, dtype, scalar_args, \
                            summary)                                                             \
  {symbol, TargetKind::target, runtime_function, buffers, scalars, DType::dtype, scalar_args, summary},
#include "ir/LibraryRoutines.def"
  };
  return routines;
}

const LibraryRoutine* find_library_routine(std::string_view symbol) {
  for (const LibraryRoutine& r : all_library_routines())
    if (symbol == r.symbol) return &r;
  return nullptr;
}

} // namespace dsc::ir
