#include "runtime/gemm/Gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/HostABI.h"
#include "runtime/Matmul.h"
#include "runtime/RoutineFailure.h"
#include "runtime/ThreadPool.h"
#include "runtime/gemm/ConstantPacks.h"
#include "runtime/gemm/Driver.h"
#include "runtime/gemm/HalfGemm.h"
#include "runtime/gemm/Packing.h"
#include "runtime/gemm/Scratch.h"

namespace dsc::runtime::gemm {

namespace {

// Every table built for this architecture, the widest first.
#if defined(__x86_64__)
const GemmKernels* const kAllKernels[] = {&kAvx512Kernels, &kAvx2Kernels, &kGenericKernels};
#else
const GemmKernels* const kAllKernels[] = {&kGenericKernels};
#endif

bool cpu_runs(const GemmKernels& k) {
#if defined(__x86_64__)
  // Their files are compiled with F16C too, for the 16-bit kernels beside them.
  const bool f16c = __builtin_cpu_supports("f16c");
  if (&k == &kAvx512Kernels)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") && f16c;
  if (&k == &kAvx2Kernels)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
#endif
  return &k == &kGenericKernels;
}

const GemmKernels& choose_kernels() {
  const GemmKernels* best = &kGenericKernels;
  for (const GemmKernels* k : kAllKernels)
    if (cpu_runs(*k)) {
      best = k;
      break;
    }
  if (const char* env = std::getenv("DSC_GEMM_ISA"); env && *env) {
    if (const GemmKernels* asked = kernels_named(env)) return *asked;
    // A 16-bit instruction set (avx512bf16) runs f32 products with its f32 kernels.
    if (const HalfKernels* half = half_kernels_named(env)) return *half->f32;
    std::fprintf(stderr,
                 "dsc: warning: DSC_GEMM_ISA=%s is not an instruction set this CPU runs "
                 "(avx512, avx2 or generic); using %s\n",
                 env, best->isa);
  }
  return *best;
}

thread_local Scratch packed_a_scratch;
thread_local Scratch packed_b_scratch;

// Floats in the largest micro tile (AVX-512's 14 x 32).
constexpr int64_t kMaxTile = 512;

// A packed whole (every depth block at once) when it takes at most this many floats: 4 MiB.
constexpr int64_t kWholeDepthFloats = int64_t(1) << 20;

// `prepacked`: all of B in the layout of packed_b_offset (a constant's pack), or null to pack
// each block of B here.
//
// Tasks are row blocks of at most mc rows times column groups of whole panels, about four per
// thread. The row panels are shared out evenly, and the number of row blocks is a multiple of
// the thread count, so no thread is left with a short last block while the others still work;
// but up to three row blocks' rows are one row block, split by columns alone, so that each
// panel of B is read once (at 32 rows, BERT's layer took 20% less time than with two row
// blocks).
// Per depth block, A is packed, then the tasks run. When B is packed already and all of A fits
// kWholeDepthFloats, A is packed for every depth block at once and each task runs every depth
// block of its tiles: two pool loops per product instead of two per depth block (what a product
// of few rows is dominated by), and a task's block of C stays in cache across the depth.
//
// An epilogue leaves the tasks as they are. A row block's rows are final once every column
// group of it has run the last depth block of the last column block; the task that finishes
// last counts the row block down to zero and runs the epilogue on it then, while it is in
// cache. Tasks of whole rows instead (one column group, the row blocks split finer to keep the
// threads busy) stream B once per extra row block: at 2 threads, 128 x 3072 x 768 with a bias
// took 25-30% longer than the product and a separate bias kernel; this way, 0-8%.
void packed(const GemmKernels& K, const Product& p, int threads, const float* prepacked,
            const Epilogue* epilogue) {
  const int64_t mr = K.mr, nr = K.nr;
  if (mr * nr > kMaxTile) std::abort(); // a kernel table with a larger tile than planned for
  const int64_t mc = std::max<int64_t>(mr, kMc / mr * mr);
  const int64_t nc_max = column_block(nr);
  const int64_t a_panels = ceil_div(p.m, mr);
  const int64_t depth_blocks = ceil_div(p.k, kKc);
  const int64_t a_block = a_panels * mr * packed_steps(K, kKc); // floats of A per depth block
  const bool whole_depth = prepacked && a_block * depth_blocks <= kWholeDepthFloats;
  float* pa = packed_a_scratch.get(whole_depth ? a_block * depth_blocks : a_block);
  // Up to three row blocks' rows (420 on AVX-512: A's depth block, 430 KB, stays in L2) are
  // one row block, and the threads split the columns: each panel of B is then read once, not
  // once per thread (a product of few rows streams B, the weights, from memory). Its epilogue
  // then runs after the product, its rows split over the threads, rather than all on the
  // thread that finishes last. Measured in bench/cpu/README.md: from 1024 rows on it no longer
  // pays.
  const bool split_columns = threads > 1 && a_panels <= 3 * (mc / mr);
  const Epilogue* epilogue_per_block = split_columns ? nullptr : epilogue;
  const int64_t row_blocks =
      split_columns ? 1
                    : std::min(a_panels, ceil_div(ceil_div(a_panels, mc / mr), threads) * threads);
  float* scratch_b =
      prepacked ? nullptr
                : packed_b_scratch.get(ceil_div(std::min(p.n, nc_max), nr) * nr * packed_steps(K, kKc));

  if (whole_depth)
    for_range(threads, a_panels * depth_blocks, 4, [&](int64_t b, int64_t e) {
      for (int64_t q = b; q < e; ++q) {
        const int64_t d = q / a_panels, panel = q % a_panels, p0 = d * kKc;
        pack_a(K, p, p0, std::min(kKc, p.k - p0), pa + d * a_block, panel, panel + 1);
      }
    });
  for (int64_t j0 = 0; j0 < p.n; j0 += nc_max) {
    const int64_t nc = std::min(nc_max, p.n - j0);
    const int64_t b_panels = ceil_div(nc, nr);
    const int64_t want_groups = std::max<int64_t>(1, ceil_div(4 * threads, row_blocks));
    const int64_t group = std::max<int64_t>(1, ceil_div(b_panels, want_groups));
    const int64_t col_groups = ceil_div(b_panels, group);
    // Task t's row block. Without an epilogue a thread's next task is likely the same row block
    // (its A stays in cache); with one, the row blocks take turns, so that every row block's
    // last task, and its epilogue, comes at the end, on whichever threads are free, instead of
    // one thread running the last row block's epilogue while the others wait.
    auto row_block_of = [&](int64_t t) {
      return epilogue_per_block ? t % row_blocks : t / col_groups;
    };
    // Task t's tiles of depth block p0: A packed at `pa_block`, B at `pb`.
    auto tiles = [&](int64_t t, int64_t p0, const float* pa_block, const float* pb) {
      alignas(64) float tile[kMaxTile]; // an edge tile, MR x NR
      const int64_t kc = std::min(kKc, p.k - p0), steps = packed_steps(K, kc);
      const bool accumulate = p0 > 0;
      const int64_t rb = row_block_of(t), cg = epilogue_per_block ? t / row_blocks : t % col_groups;
      const int64_t first_a = rb * a_panels / row_blocks;
      const int64_t last_a = (rb + 1) * a_panels / row_blocks;
      const int64_t first_b = cg * group, last_b = std::min(b_panels, first_b + group);
      for (int64_t jb = first_b; jb < last_b; ++jb) {
        const int64_t col = j0 + jb * nr;
        const int64_t cols = std::min(nr, p.n - col);
        const float* bpanel = pb + jb * steps * nr;
        for (int64_t ia = first_a; ia < last_a; ++ia) {
          const int64_t row = ia * mr;
          const int64_t rows = std::min(mr, p.m - row);
          const float* apanel = pa_block + ia * steps * mr;
          float* c = p.c + row * p.ldc + col;
          if (cols == nr) {
            K.micro_tile[rows](kc, apanel, bpanel, c, p.ldc, accumulate);
            continue;
          }
          K.micro_tile[rows](kc, apanel, bpanel, tile, nr, false);
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < cols; ++j)
              c[r * p.ldc + j] = (accumulate ? c[r * p.ldc + j] : 0.0f) + tile[r * nr + j];
        }
      }
    };
    const int64_t tasks = row_blocks * col_groups;
    // Per row block, its tasks yet to run the last depth block of the last column block. The
    // last one's decrement acquires the others' releases, and with them their tiles of C.
    const bool last_columns = j0 + nc >= p.n;
    std::vector<std::atomic<int64_t>> left(epilogue_per_block && last_columns ? row_blocks : 0);
    for (std::atomic<int64_t>& l : left) l.store(col_groups, std::memory_order_relaxed);
    // Called by task t after its last tiles: the epilogue, when its row block is final.
    auto finish = [&](int64_t t) {
      const int64_t rb = row_block_of(t);
      if (left[rb].fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      const int64_t row = rb * a_panels / row_blocks * mr;
      const int64_t end = std::min((rb + 1) * a_panels / row_blocks * mr, p.m);
      epilogue_per_block->run(row, end - row);
    };
    if (whole_depth) {
      for_range(threads, tasks, 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          for (int64_t d = 0; d < depth_blocks; ++d)
            tiles(t, d * kKc, pa + d * a_block,
                  prepacked + packed_b_offset(K, j0, d * kKc, p.n, p.k));
          if (epilogue_per_block && last_columns) finish(t);
        }
      });
      continue;
    }
    for (int64_t p0 = 0; p0 < p.k; p0 += kKc) {
      const int64_t kc = std::min(kKc, p.k - p0);
      const float* pb = prepacked ? prepacked + packed_b_offset(K, j0, p0, p.n, p.k) : scratch_b;
      if (!prepacked)
        for_range(threads, b_panels, 4,
                  [&](int64_t b, int64_t e) { pack_b(K, p, p0, kc, j0, nc, scratch_b, b, e); });
      for_range(threads, a_panels, 4, [&](int64_t b, int64_t e) { pack_a(K, p, p0, kc, pa, b, e); });
      const bool last = last_columns && p0 + kc >= p.k;
      for_range(threads, tasks, 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          tiles(t, p0, pa, pb);
          if (epilogue_per_block && last) finish(t);
        }
      });
    }
  }
  if (epilogue && split_columns)
    for_range(threads, p.m, ceil_div(p.m, threads),
              [&](int64_t b, int64_t e) { epilogue->run(b, e - b); });
}

// Whether the small-m path runs the product (Gemm.h: the buckets): it needs rows of A
// contiguous, and rows or columns of B.
bool runs_in_place(const GemmKernels& K, const Product& p) {
  if (!(p.a_col == 1 && (p.b_col == 1 || p.b_row == 1))) return false;
  if (p.m <= kSmallM) return true;
  return p.m <= kFewRows && p.b_col == 1 && p.n % K.width == 0 && p.k * p.n <= kInPlaceB;
}

} // namespace

void check_epilogue_args(const char* entry, int64_t num_buffers, int64_t num_symbols,
                         int64_t rows_slot, int64_t first_row_slot) {
  if (num_buffers >= 0 && num_buffers <= Epilogue::kMaxBuffers && num_symbols <= Epilogue::kMaxSymbols &&
      rows_slot >= 0 && rows_slot < num_symbols && first_row_slot >= -1 &&
      first_row_slot < num_symbols)
    return;
  std::fprintf(stderr,
               "dsc: internal error: %s with %lld buffers, %lld symbols, rows_slot %lld and "
               "first_row_slot %lld (at most %lld buffers and %lld symbols, rows_slot one of the "
               "symbols, first_row_slot one or -1)\n",
               entry, static_cast<long long>(num_buffers), static_cast<long long>(num_symbols),
               static_cast<long long>(rows_slot), static_cast<long long>(first_row_slot),
               static_cast<long long>(Epilogue::kMaxBuffers),
               static_cast<long long>(Epilogue::kMaxSymbols));
  std::abort();
}

void Epilogue::run(int64_t row0, int64_t rows) const {
  if (finish_rows) finish_rows(finish_context, row0, rows);
  if (!kernel) return;
  // The kernel's own arrays, shifted to the block: it may run on several threads at once.
  void* shifted[kMaxBuffers];
  int64_t values[kMaxSymbols];
  const int64_t row = row_base + row0;
  for (int64_t i = 0; i < num_buffers; ++i)
    shifted[i] = static_cast<char*>(buffers[i]) + row * row_bytes[i];
  std::copy_n(symbols, num_symbols, values);
  values[rows_slot] = rows;
  if (first_row_slot >= 0) values[first_row_slot] = row;
  kernel(shifted, values);
}

const GemmKernels* kernels_named(std::string_view isa) {
  for (const GemmKernels* k : kAllKernels)
    if (isa == k->isa) return cpu_runs(*k) ? k : nullptr;
  return nullptr;
}

const GemmKernels& kernels() {
  static const GemmKernels& chosen = choose_kernels();
  return chosen;
}

void multiply(const GemmKernels& K, const Product& p, bool parallel, const Epilogue* epilogue) {
  if (p.m <= 0 || p.n <= 0) {
    if (epilogue && p.m > 0 && p.n == 0) epilogue->run(0, p.m); // no elements, final rows
    return;
  }
  if (p.k <= 0) {
    for (int64_t i = 0; i < p.m; ++i)
      std::fill(p.c + i * p.ldc, p.c + i * p.ldc + p.n, 0.0f);
    if (epilogue) epilogue->run(0, p.m);
    return;
  }
  const int threads = product_threads(parallel, p.m, p.n, p.k);
  // B that is a declared constant is packed once (ConstantPacks.h); then even a product of a
  // few rows is cheapest on the packed path.
  std::shared_ptr<const float[]> constant = constant_pack(K, p);
  if (constant || p.a_panels || p.b_panels)
    packed(K, p, threads, constant.get(), epilogue);
  else if (runs_in_place(K, p)) {
    // Split over columns, so no thread holds whole rows: the epilogue runs once, at the end.
    small_m(K, K.mr, K.nr, K.width, threads, p.a, p.a_row, p.b, p.b_row, p.b_col, p.c, p.ldc, p.m,
            p.n, p.k);
    if (epilogue) epilogue->run(0, p.m);
  } else
    packed(K, p, threads, nullptr, epilogue);
}

} // namespace dsc::runtime::gemm

extern "C" void dsc_rt_gemm_f32(const float* a, const float* bm, float* c, int64_t batch,
                                int64_t m, int64_t n, int64_t k, int64_t a_batch_stride,
                                int64_t b_batch_stride, int64_t trans_b) {
  dsc::runtime::call_dense(&dsc_rt_gemm_f32_strided, a, bm, c, batch, m, n, k, a_batch_stride,
                           b_batch_stride, trans_b);
}

extern "C" void dsc_rt_gemm_f32_strided(const float* a, const float* bm, float* c,
                                        const dsc_strided_product* product) {
  dsc_rt_gemm_f32_strided_epilogue(a, bm, c, product, nullptr, nullptr, nullptr, 0, nullptr, 0, 0,
                                   -1);
}

extern "C" void dsc_rt_gemm_f32_strided_epilogue(const float* a, const float* bm, float* c,
                                                 const dsc_strided_product* product,
                                                 dsc_kernel_fn epilogue, void* const* buffers,
                                                 const int64_t* row_bytes, int64_t num_buffers,
                                                 const int64_t* symbols, int64_t num_symbols,
                                                 int64_t rows_slot, int64_t first_row_slot) {
  dsc::runtime::run_routine(__func__, [&] {
    using namespace dsc::runtime::gemm;
    strided_entry("dsc_rt_gemm_f32_strided_epilogue", kernels(), Product{.a = a, .b = bm, .c = c},
                  *product, epilogue, buffers, row_bytes, num_buffers, symbols, num_symbols,
                  rows_slot, first_row_slot);
  });
}
