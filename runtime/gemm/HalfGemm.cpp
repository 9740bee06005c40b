#include "runtime/gemm/HalfGemm.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

#include "runtime/HostABI.h"
#include "runtime/RoutineFailure.h"
#include "runtime/gemm/ConstantPacks.h"
#include "runtime/gemm/Driver.h"
#include "runtime/gemm/Scratch.h"

namespace dsc::runtime::gemm {

namespace {

// Every table built for this architecture, the widest first.
#if defined(__x86_64__)
const HalfKernels* const kAllHalfKernels[] = {&kAvx512Bf16HalfKernels, &kAvx512HalfKernels,
                                              &kAvx2HalfKernels, &kGenericHalfKernels};
#else
const HalfKernels* const kAllHalfKernels[] = {&kGenericHalfKernels};
#endif

bool cpu_runs(const HalfKernels& k) {
#if defined(__x86_64__)
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") &&
                      __builtin_cpu_supports("f16c");
  if (&k == &kAvx512Bf16HalfKernels)
    return avx512 && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512bf16");
  if (&k == &kAvx512HalfKernels) return avx512;
  if (&k == &kAvx2HalfKernels)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("f16c");
#endif
  return &k == &kGenericHalfKernels;
}

const HalfKernels& choose_half_kernels() {
  const HalfKernels* best = &kGenericHalfKernels;
  for (const HalfKernels* k : kAllHalfKernels)
    if (cpu_runs(*k)) {
      best = k;
      break;
    }
  if (const char* env = std::getenv("DSC_GEMM_ISA"); env && *env) {
    if (const HalfKernels* asked = half_kernels_named(env)) return *asked;
    std::fprintf(stderr,
                 "dsc: warning: DSC_GEMM_ISA=%s is not an instruction set this CPU runs "
                 "(avx512bf16, avx512, avx2 or generic); using %s for 16-bit products\n",
                 env, best->isa);
  }
  return *best;
}

// C in f32, the product's rows one after another (n floats each).
thread_local Scratch wide_c_scratch;

// Rounds rows of the f32 C into the 16-bit C (Epilogue::finish_rows).
struct Rounding {
  const HalfKernels::PerType* kernels;
  const float* wide;
  int64_t n;
  uint16_t* c;
  int64_t ldc;
};

void round_rows(const void* context, int64_t row0, int64_t rows) {
  const auto& r = *static_cast<const Rounding*>(context);
  for (int64_t i = row0; i < row0 + rows; ++i)
    r.kernels->narrow(r.wide + i * r.n, r.n, r.c + i * r.ldc);
}

// The operands as PanelSources (Gemm.h) for the f32 driver: widened, or in pairs of depths.
struct Operands {
  const HalfKernels* kernels;
  const HalfProduct* p;
};

template <bool Pairs>
void pack_panel(const Operands& o, const uint16_t* src, int64_t row, int64_t col, int64_t kc,
                int64_t cols, int64_t width, float* out) {
  if constexpr (Pairs)
    o.kernels->pack_bf16_pairs(src, row, col, kc, cols, width, out);
  else
    (*o.kernels)[o.p->type].widen_panel(src, row, col, kc, cols, width, out);
}

// A's rows [first, first + rows) and columns [p0, p0 + kc): element (q, r) of the block is
// A(first + r, p0 + q).
template <bool Pairs>
void pack_a_panel(const void* context, int64_t p0, int64_t kc, int64_t first, int64_t rows,
                  int64_t mr, float* out) {
  const auto& o = *static_cast<const Operands*>(context);
  const HalfProduct& p = *o.p;
  pack_panel<Pairs>(o, p.a + first * p.a_row + p0 * p.a_col, p.a_col, p.a_row, kc, rows, mr, out);
}

// B's rows [p0, p0 + kc) and columns [first, first + cols). One function per type, so that a
// constant's packs (keyed by the function) of one type are never taken for the other's.
template <bool Pairs, HalfType Type>
void pack_b_panel(const void* context, int64_t p0, int64_t kc, int64_t first, int64_t cols,
                  int64_t nr, float* out) {
  const auto& o = *static_cast<const Operands*>(context);
  const HalfProduct& p = *o.p;
  pack_panel<Pairs>(o, p.b + p0 * p.b_row + first * p.b_col, p.b_row, p.b_col, kc, cols, nr, out);
}

using PanelFn = void (*)(const void*, int64_t, int64_t, int64_t, int64_t, int64_t, float*);

PanelFn b_packer(bool pairs, HalfType type) {
  if (pairs) return &pack_b_panel<true, HalfType::BF16>;
  return type == HalfType::BF16 ? &pack_b_panel<false, HalfType::BF16>
                                : &pack_b_panel<false, HalfType::F16>;
}

// The tag of a constant's transposed copy (ConstantFormKey::maker).
const char kTransposedTag = 0;

// B (k x n, rows b_row apart) as n x k, dense; null when there is no memory for it.
std::shared_ptr<const void> transpose(const HalfProduct& p) {
  std::shared_ptr<uint16_t[]> t(new (std::nothrow) uint16_t[static_cast<size_t>(p.n * p.k)]);
  if (!t) return nullptr;
  constexpr int64_t kTile = 64; // a tile of B's rows and columns at a time, both in cache
  for (int64_t q0 = 0; q0 < p.k; q0 += kTile)
    for (int64_t j0 = 0; j0 < p.n; j0 += kTile)
      for (int64_t q = q0; q < std::min(p.k, q0 + kTile); ++q)
        for (int64_t j = j0; j < std::min(p.n, j0 + kTile); ++j)
          t[j * p.k + q] = p.b[q * p.b_row + j];
  return t;
}

} // namespace

const HalfKernels* half_kernels_named(std::string_view isa) {
  for (const HalfKernels* k : kAllHalfKernels)
    if (isa == k->isa) return cpu_runs(*k) ? k : nullptr;
  return nullptr;
}

const HalfKernels& half_kernels() {
  static const HalfKernels& chosen = choose_half_kernels();
  return chosen;
}

void multiply(const HalfKernels& K, const HalfProduct& p, bool parallel, const Epilogue* epilogue) {
  if (p.m <= 0 || p.n <= 0) {
    if (epilogue && p.m > 0 && p.n == 0) epilogue->run(0, p.m); // no elements, final rows
    return;
  }
  if (p.k <= 0) {
    for (int64_t i = 0; i < p.m; ++i)
      std::fill(p.c + i * p.ldc, p.c + i * p.ldc + p.n, uint16_t{0}); // +0.0 in both types
    if (epilogue) epilogue->run(0, p.m);
    return;
  }
  const HalfKernels::PerType& T = K[p.type];
  float* wide = wide_c_scratch.get(p.m * p.n);
  const Rounding rounding{&T, wide, p.n, p.c, p.ldc};
  Epilogue finish = epilogue ? *epilogue : Epilogue{};
  finish.finish_rows = &round_rows;
  finish.finish_context = &rounding;
  const GemmKernels& F = *K.f32;
  const int64_t last_b = (p.k - 1) * p.b_row + (p.n - 1) * p.b_col;
  const size_t b_bytes = static_cast<size_t>(last_b + 1) * sizeof(uint16_t);
  // B read by dot products (its columns contiguous, or a constant's transpose) serves few
  // rows: past 8 they cost more than the packed path (at 16 x 2048 x 2048, 3x the f32
  // product), and bf16 in pairs (vdpbf16ps) is faster packed from one row on (1 x 2048 x 2048
  // from a constant pack: 0.07-0.12 ms against 0.16-0.18 ms by dot products, 2 threads).
  const int64_t dot_rows = p.type == HalfType::BF16 && K.bf16_pairs ? 0 : 8;
  const bool constant = is_constant(p.b, b_bytes);
  const bool dots = p.b_row == 1 || (constant && p.n >= 4);
  if (p.m <= kSmallM && p.a_col == 1 && (p.b_col == 1 || p.b_row == 1) &&
      (!dots || p.m <= dot_rows)) {
    // A few rows read B in place, every load widened. A constant B with rows contiguous (a
    // model's weights as [K, N]) is read from its transpose instead, made once: each column a
    // contiguous stream for the dot products, where B's rows (a page apart when N is large)
    // would cost a TLB miss per row and column block.
    const uint16_t* b = p.b;
    int64_t b_row = p.b_row, b_col = p.b_col;
    std::shared_ptr<const void> transposed;
    if (p.b_col == 1 && constant && p.n >= 4)
      transposed = constant_form(
          {p.b, p.n, p.k, p.b_row, p.b_col, &kTransposedTag, static_cast<uintptr_t>(p.type)},
          b_bytes, [&] { return transpose(p); });
    if (transposed) {
      b = static_cast<const uint16_t*>(transposed.get());
      b_row = 1;
      b_col = p.k;
    }
    small_m(T, F.mr, F.nr, F.width, product_threads(parallel, p.m, p.n, p.k), p.a, p.a_row, b,
            b_row, b_col, wide, p.n, p.m, p.n, p.k);
    finish.run(0, p.m);
    return;
  }
  const bool pairs = p.type == HalfType::BF16 && K.bf16_pairs;
  const Operands operands{&K, &p};
  const PanelSource a_panels{pairs ? &pack_a_panel<true> : &pack_a_panel<false>, &operands};
  const PanelSource b_panels{b_packer(pairs, p.type), &operands, p.b, b_bytes};
  const Product wide_product{.a_panels = &a_panels, .b_panels = &b_panels, .c = wide, .m = p.m,
                             .n = p.n, .k = p.k, .a_row = p.a_row, .a_col = p.a_col,
                             .b_row = p.b_row, .b_col = p.b_col, .ldc = p.n};
  multiply(pairs ? *K.bf16_pairs : F, wide_product, parallel, &finish);
}

} // namespace dsc::runtime::gemm

namespace {

template <dsc::runtime::gemm::HalfType Type>
void half_entry(const char* entry, const uint16_t* a, const uint16_t* bm, uint16_t* c,
                const dsc_strided_product* product, dsc_kernel_fn epilogue, void* const* buffers,
                const int64_t* row_bytes, int64_t num_buffers, const int64_t* symbols,
                int64_t num_symbols, int64_t rows_slot, int64_t first_row_slot) {
  using namespace dsc::runtime::gemm;
  strided_entry(entry, half_kernels(), HalfProduct{.type = Type, .a = a, .b = bm, .c = c},
                *product, epilogue, buffers, row_bytes, num_buffers, symbols, num_symbols,
                rows_slot, first_row_slot);
}

} // namespace

extern "C" void dsc_rt_gemm_bf16_strided(const uint16_t* a, const uint16_t* bm, uint16_t* c,
                                         const dsc_strided_product* product) {
  dsc::runtime::run_routine(__func__, [&] {
    half_entry<dsc::runtime::gemm::HalfType::BF16>("dsc_rt_gemm_bf16_strided", a, bm, c, product,
                                                   nullptr, nullptr, nullptr, 0, nullptr, 0, 0, -1);
  });
}

extern "C" void dsc_rt_gemm_bf16_strided_epilogue(
    const uint16_t* a, const uint16_t* bm, uint16_t* c, const dsc_strided_product* product,
    dsc_kernel_fn epilogue, void* const* buffers, const int64_t* row_bytes, int64_t num_buffers,
    const int64_t* symbols, int64_t num_symbols, int64_t rows_slot, int64_t first_row_slot) {
  dsc::runtime::run_routine(__func__, [&] {
    half_entry<dsc::runtime::gemm::HalfType::BF16>("dsc_rt_gemm_bf16_strided_epilogue", a, bm, c,
                                                   product, epilogue, buffers, row_bytes,
                                                   num_buffers, symbols, num_symbols, rows_slot,
                                                   first_row_slot);
  });
}

extern "C" void dsc_rt_gemm_f16_strided(const uint16_t* a, const uint16_t* bm, uint16_t* c,
                                        const dsc_strided_product* product) {
  dsc::runtime::run_routine(__func__, [&] {
    half_entry<dsc::runtime::gemm::HalfType::F16>("dsc_rt_gemm_f16_strided", a, bm, c, product,
                                                  nullptr, nullptr, nullptr, 0, nullptr, 0, 0, -1);
  });
}

extern "C" void dsc_rt_gemm_f16_strided_epilogue(
    const uint16_t* a, const uint16_t* bm, uint16_t* c, const dsc_strided_product* product,
    dsc_kernel_fn epilogue, void* const* buffers, const int64_t* row_bytes, int64_t num_buffers,
    const int64_t* symbols, int64_t num_symbols, int64_t rows_slot, int64_t first_row_slot) {
  dsc::runtime::run_routine(__func__, [&] {
    half_entry<dsc::runtime::gemm::HalfType::F16>("dsc_rt_gemm_f16_strided_epilogue", a, bm, c,
                                                  product, epilogue, buffers, row_bytes, num_buffers,
                                                  symbols, num_symbols, rows_slot, first_row_slot);
  });
}
