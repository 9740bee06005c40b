#include "runtime/gemm/Packing.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dsc::runtime::gemm {

namespace {
constexpr int64_t kFloatsPerLine = 64 / sizeof(float);
}

// Panels [begin, end) of B's rows [p0, p0 + kc) and columns [j0, j0 + nc) into `out`, NR
// columns per panel (zeros past column nc).
void pack_b(const GemmKernels& K, const Product& p, int64_t p0, int64_t kc, int64_t j0,
            int64_t nc, float* out, int64_t begin, int64_t end) {
  const int64_t nr = K.nr;
  for (int64_t panel = begin; panel < end; ++panel) {
    float* dst = out + panel * packed_steps(K, kc) * nr;
    int64_t col = j0 + panel * nr;
    int64_t cols = std::min(nr, j0 + nc - col);
    if (p.b_panels) {
      p.b_panels->pack(p.b_panels->context, p0, kc, col, cols, nr, dst);
      continue;
    }
    if (K.depth_step != 1) std::abort(); // pairs come from a PanelSource only
    if (p.b_col == 1) { // rows of B are contiguous
      for (int64_t q = 0; q < kc; ++q) {
        const float* src = p.b + (p0 + q) * p.b_row + col;
        float* d = dst + q * nr;
        std::memcpy(d, src, cols * sizeof(float));
        std::fill(d + cols, d + nr, 0.0f);
      }
      continue;
    }
    for (int64_t j = 0; j < nr; ++j) { // a column at a time: contiguous when B is transposed
      if (j >= cols) {
        for (int64_t q = 0; q < kc; ++q)
          dst[q * nr + j] = 0.0f;
        continue;
      }
      const float* src = p.b + (col + j) * p.b_col + p0 * p.b_row;
      if (p.b_row == 1) { // B stored transposed: the column is contiguous
        for (int64_t q = 0; q < kc; ++q)
          dst[q * nr + j] = src[q];
        continue;
      }
      for (int64_t q = 0; q < kc; ++q)
        dst[q * nr + j] = src[q * p.b_row];
    }
  }
}

// Panels [begin, end) of A's rows (MR per panel, zeros past row m) and columns [p0, p0 + kc).
void pack_a(const GemmKernels& K, const Product& p, int64_t p0, int64_t kc, float* out,
            int64_t begin, int64_t end) {
  const int64_t mr = K.mr;
  for (int64_t panel = begin; panel < end; ++panel) {
    float* dst = out + panel * packed_steps(K, kc) * mr;
    if (p.a_panels) {
      p.a_panels->pack(p.a_panels->context, p0, kc, panel * mr, std::min(mr, p.m - panel * mr), mr,
                       dst);
      continue;
    }
    if (K.depth_step != 1) std::abort(); // pairs come from a PanelSource only
    const float* first = p.a + panel * mr * p.a_row + p0;
    if (K.pack_a_panel && p.a_col == 1 && (panel + 1) * mr <= p.m) { // a full panel, rows dense
      const bool more = (panel + 2) * mr <= p.m;
      K.pack_a_panel(first, p.a_row, kc, dst, more ? first + mr * p.a_row : nullptr);
      continue;
    }
    for (int64_t r = 0; r < mr; ++r) {
      int64_t row = panel * mr + r;
      if (row >= p.m) {
        for (int64_t q = 0; q < kc; ++q)
          dst[q * mr + r] = 0.0f;
        continue;
      }
      const float* src = p.a + row * p.a_row + p0 * p.a_col;
      if (p.a_col != 1) { // A read down its columns (a transposed operand)
        for (int64_t q = 0; q < kc; ++q)
          dst[q * mr + r] = src[q * p.a_col];
        continue;
      }
      // A row's block is a stream of only kc floats, too short for the hardware prefetcher to
      // get ahead of: fetch the block of the row after next while this one is copied.
      if (row + 2 < p.m)
        for (int64_t q = 0; q < kc; q += kFloatsPerLine)
          __builtin_prefetch(src + 2 * p.a_row + q);
      for (int64_t q = 0; q < kc; ++q)
        dst[q * mr + r] = src[q];
    }
  }
}

namespace {
// Steps of all the depth blocks of k before p0 (each of kKc but the last).
int64_t steps_before(const GemmKernels& K, int64_t p0, int64_t k) {
  const int64_t whole = std::min(p0, k) / kKc;
  const int64_t rest = std::min(p0, k) - whole * kKc;
  return whole * packed_steps(K, kKc) + packed_steps(K, rest);
}
} // namespace

int64_t packed_b_floats(const GemmKernels& K, int64_t n, int64_t k) {
  const int64_t nr = K.nr, nc = column_block(nr), depth = steps_before(K, k, k);
  return (n / nc) * nc * depth + ceil_div(n % nc, nr) * nr * depth;
}

int64_t packed_b_offset(const GemmKernels& K, int64_t j0, int64_t p0, int64_t n, int64_t k) {
  const int64_t nr = K.nr, nc = column_block(nr), depth = steps_before(K, k, k);
  const int64_t panels = ceil_div(std::min(nc, n - j0), nr); // in the block at j0
  // The blocks before it are full.
  return (j0 / nc) * nc * depth + panels * nr * steps_before(K, p0, k);
}

} // namespace dsc::runtime::gemm
