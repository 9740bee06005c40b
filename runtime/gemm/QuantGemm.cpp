#include "runtime/gemm/QuantGemm.h"

#include <algorithm>

#include "runtime/HostABI.h"
#include "runtime/RoutineFailure.h"
#include "runtime/gemm/Driver.h"
#include "runtime/gemm/Scratch.h"

namespace dsc::runtime::gemm {

namespace {

#if defined(__x86_64__)
const QuantKernels* const kAllQuantKernels[] = {&kAvx512QuantKernels, &kAvx2QuantKernels,
                                                &kGenericQuantKernels};
#else
const QuantKernels* const kAllQuantKernels[] = {&kGenericQuantKernels};
#endif

// One row of dequantized weights, per thread (a panel's depth block of it).
thread_local Scratch row_scratch;
// The sums of x's groups, per calling thread.
thread_local Scratch xsum_scratch;

// W^T's panels for the f32 driver: element (q, j) of the block is value(col + j, p0 + q).
struct Weights {
  const QuantKernels* kernels;
  int bits;
  const int8_t* w;
  const uint16_t* scales;
  int64_t k, groups;
};

void pack_weights(const void* context, int64_t p0, int64_t kc, int64_t col, int64_t cols,
                  int64_t nr, float* out) {
  const auto& c = *static_cast<const Weights*>(context);
  const int64_t row_bytes = c.bits == 8 ? c.k : c.k / 2, group = c.k / c.groups;
  float* row = row_scratch.get(kc);
  for (int64_t j = 0; j < nr; ++j) {
    if (j >= cols) {
      for (int64_t q = 0; q < kc; ++q) out[q * nr + j] = 0.0f;
      continue;
    }
    c.kernels->dequantize[c.bits == 4](c.w + (col + j) * row_bytes,
                                       c.scales + (col + j) * c.groups, group, p0, kc, row);
    for (int64_t q = 0; q < kc; ++q) out[q * nr + j] = row[q];
  }
}

} // namespace

const QuantKernels& quant_kernels() {
  static const QuantKernels& chosen = []() -> const QuantKernels& {
    for (const QuantKernels* q : kAllQuantKernels)
      if (q->f32 == &kernels()) return *q;
    return kGenericQuantKernels;
  }();
  return chosen;
}

void multiply_quantized(const QuantKernels& K, int bits, const float* x, const int8_t* w,
                        const uint16_t* scales, float* y, int64_t m, int64_t n, int64_t k,
                        int64_t groups) {
  if ((bits != 8 && bits != 4) || m < 0 || n < 0 || k < 0 || groups < 1 || k % groups != 0 ||
      (bits == 4 && k % 2 != 0))
    return; // documented as doing nothing
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(y, y + m * n, 0.0f);
    return;
  }
  if (m <= kSmallM) {
    const int64_t row_bytes = bits == 8 ? k : k / 2, group = k / groups;
    // Each group's sum of each row of x, once for every column (4 bits' offset).
    float* xsum = bits == 4 ? xsum_scratch.get(m * groups) : nullptr;
    for (int64_t i = 0; xsum && i < m; ++i)
      for (int64_t g = 0; g < groups; ++g) {
        float sum = 0.0f;
        for (int64_t q = g * group; q < (g + 1) * group; ++q) sum += x[i * k + q];
        xsum[i * groups + g] = sum;
      }
    for_range(product_threads(true, m, n, k), n, 16, [&](int64_t begin, int64_t end) {
      K.rows[bits == 4](m, k, group, x, k, w, row_bytes, scales, begin, end, y, n, xsum);
    });
    return;
  }
  const Weights weights{&K, bits, w, scales, k, groups};
  const PanelSource panels{&pack_weights, &weights}; // no `data`: never a constant's pack
  const Product p{.a = x, .b_panels = &panels, .c = y, .m = m, .n = n, .k = k, .a_row = k,
                  .a_col = 1, .b_row = 1, .b_col = k, .ldc = n};
  multiply(*K.f32, p);
}

} // namespace dsc::runtime::gemm

extern "C" void dsc_rt_gemm_q8_f32(const float* x, const int8_t* w, const uint16_t* scales,
                                   float* y, int64_t m, int64_t n, int64_t k, int64_t groups) {
  dsc::runtime::run_routine(__func__, [&] {
    using namespace dsc::runtime::gemm;
    multiply_quantized(quant_kernels(), 8, x, w, scales, y, m, n, k, groups);
  });
}

extern "C" void dsc_rt_gemm_q4_f32(const float* x, const int8_t* w, const uint16_t* scales,
                                   float* y, int64_t m, int64_t n, int64_t k, int64_t groups) {
  dsc::runtime::run_routine(__func__, [&] {
    using namespace dsc::runtime::gemm;
    multiply_quantized(quant_kernels(), 4, x, w, scales, y, m, n, k, groups);
  });
}
