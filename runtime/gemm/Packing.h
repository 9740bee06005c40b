#pragma once
// Packing for dsc's GEMM (runtime/gemm/Gemm.h): blocks of A into panels of MR rows and blocks
// of B into panels of NR columns, the layouts the micro tiles read
// (runtime/gemm/MicroKernel.h), and where each block of a whole packed B lies (the layout of
// runtime/gemm/ConstantPacks.h).

#include <cstdint>

#include "runtime/gemm/Gemm.h"

namespace dsc::runtime::gemm {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The column block of the driver for panels of nr columns (kNc rounded down to a multiple).
inline int64_t column_block(int64_t nr) { return kNc / nr * nr > 0 ? kNc / nr * nr : nr; }

// Panels [begin, end) of B's rows [p0, p0 + kc) and columns [j0, j0 + nc) into `out`, K.nr
// columns per panel, packed_steps(K, kc) steps of K.nr floats each (zeros past column nc); made
// by p.b_panels when the product has one.
void pack_b(const GemmKernels& K, const Product& p, int64_t p0, int64_t kc, int64_t j0,
            int64_t nc, float* out, int64_t begin, int64_t end);

// Panels [begin, end) of A's rows (K.mr per panel, zeros past row m) and columns [p0, p0 + kc),
// packed_steps(K, kc) steps of K.mr floats each (K.pack_a_panel's, where it has one and the
// panel is full; made by p.a_panels when the product has one).
void pack_a(const GemmKernels& K, const Product& p, int64_t p0, int64_t kc, float* out,
            int64_t begin, int64_t end);

// A whole B packed block by block: column blocks of column_block(K.nr) in order, each holding
// its depth blocks of kKc in order, each the panels pack_b writes. The floats it takes, and
// where the block at column j0 and depth p0 (a multiple of kKc) starts.
int64_t packed_b_floats(const GemmKernels& K, int64_t n, int64_t k);
int64_t packed_b_offset(const GemmKernels& K, int64_t j0, int64_t p0, int64_t n, int64_t k);

} // namespace dsc::runtime::gemm
