/* The arithmetic peak of one core, for the roofline of bench/cpu/half_gemm.py (which compiles
 * this with `cc -O2 -march=native` into a temporary directory and runs one copy per thread at
 * once). Not part of the build.
 *
 * Prints `key value` lines:
 *   clock_ghz      the core's clock while it runs: a chain of dependent integer adds, one per
 *                  cycle (its latency is 1 cycle on every x86 core of the last decade);
 *   f32_gflops     FMAs on 12 independent accumulators (more than latency x throughput on
 *                  Zen 4 and Intel cores: 4 cycles x 2 per cycle), 512-bit where the compiler
 *                  targets AVX-512 (else 256-bit), 2 FLOP per lane;
 *   bf16_gflops    vdpbf16ps (AVX512_BF16) likewise: each f32 lane adds two bf16 products, so
 *                  4 FLOP per lane, 64 per 512-bit instruction; 0 without AVX512_BF16;
 *   f32_flop_per_cycle, bf16_flop_per_cycle  the rates over the clock.
 * Each is the best of 3 repetitions of about 0.1 s.
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The thread's CPU time, not the wall clock: time this thread spends preempted by other work on
 * a loaded machine is not counted, so the rates are those of the core while it runs. */
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define CHAINS 12

static double clock_ghz(long adds) {
  long x = 0, n = adds;
  double t = now();
  __asm__ volatile("1:\n\t"
                   ".rept 10\n\t"
                   "add $1, %0\n\t"
                   ".endr\n\t"
                   "sub $10, %1\n\t"
                   "jnz 1b"
                   : "+r"(x), "+r"(n));
  return adds / (now() - t) / 1e9;
}

#if defined(__AVX512F__)
typedef __m512 vf;
#define LANES 16
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
static float first(vf v) { return _mm512_cvtss_f32(v); }
#else
typedef __m256 vf;
#define LANES 8
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
static float first(vf v) { return _mm256_cvtss_f32(v); }
#endif

__attribute__((noinline)) static float fma_loop(long iters) {
  vf acc[CHAINS];
  vf a = SET1(1.0000001f), b = SET1(0.999999f);
  for (int i = 0; i < CHAINS; i++) acc[i] = SET1((float)i);
  for (long k = 0; k < iters; k++) {
#pragma GCC unroll 12
    for (int i = 0; i < CHAINS; i++) acc[i] = FMA(a, acc[i], b);
  }
  vf s = acc[0];
  for (int i = 1; i < CHAINS; i++) s = ADD(s, acc[i]);
  return first(s);
}

#if defined(__AVX512BF16__)
__attribute__((noinline)) static float bf16_loop(long iters) {
  __m512 acc[CHAINS];
  __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3f00);
  for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_set1_ps((float)i);
  for (long k = 0; k < iters; k++) {
#pragma GCC unroll 12
    for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
  for (int i = 1; i < CHAINS; i++) s = _mm512_add_ps(s, acc[i]);
  return _mm512_cvtss_f32(s);
}
#endif

int main(int argc, char** argv) {
  long iters = argc > 1 ? atol(argv[1]) : 300000000L / CHAINS;
  double ghz = 0, f32 = 0, bf16 = 0;
  volatile float sink;
  for (int rep = 0; rep < 3; rep++) {
    double g = clock_ghz(iters * CHAINS * 4);
    if (g > ghz) ghz = g;
    double t = now();
    sink = fma_loop(iters);
    double r = (double)iters * CHAINS * LANES * 2 / (now() - t) / 1e9;
    if (r > f32) f32 = r;
#if defined(__AVX512BF16__)
    t = now();
    sink = bf16_loop(iters);
    r = (double)iters * CHAINS * 32 * 2 / (now() - t) / 1e9;
    if (r > bf16) bf16 = r;
#endif
  }
  (void)sink;
  printf("clock_ghz %.4f\nf32_gflops %.2f\nbf16_gflops %.2f\n", ghz, f32, bf16);
  printf("f32_flop_per_cycle %.2f\nbf16_flop_per_cycle %.2f\n", f32 / ghz, bf16 / ghz);
  printf("vector_bits %d\n", LANES * 32);
  return 0;
}
