// bench_gemm: dsc's own GEMM (runtime/gemm/Gemm.h, "dsc.sgemm") against OpenBLAS's sgemm
// ("blas.sgemm"), through the two entry points compiled code calls, in one process, at the same
// thread count, alternating in blocks so that both see the same machine.
//
//   bench_gemm [--threads N] [--reps R] [--shapes MxNxK[t],...] [--check]
//
// Each side runs R timed calls per shape, in three alternating blocks (each after a pause and a
// warm-up call); the table reports each side's median GFLOP/s and the ratio dsc / OpenBLAS. A trailing `t` on a
// shape means B is stored transposed (n x k), as attention's Q @ K^T. The default shapes are the
// BERT layer's at (B, S) = (1, 128) and (8, 128), a decode sweep (m = 1 to 16), squares up to
// 1024 and awkward primes. --check compares every result with a double-precision loop first.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "runtime/HostABI.h"
#include "runtime/Matmul.h"
#include "runtime/ThreadPool.h"
#include "runtime/gemm/Gemm.h"

namespace {

struct Shape {
  int64_t m, n, k;
  bool trans_b;
};

std::vector<Shape> default_shapes() {
  std::vector<Shape> s;
  for (int64_t m : {128, 1024}) { // BERT (1,128) and (8,128): QKV/out, FFN up, FFN down
    s.push_back({m, 768, 768, false});
    s.push_back({m, 3072, 768, false});
    s.push_back({m, 768, 3072, false});
  }
  s.push_back({128, 128, 64, true}); // one head's Q @ K^T at S = 128
  s.push_back({128, 64, 128, false}); // its probabilities @ V
  for (int64_t m : {1, 2, 4, 8, 16})  // decode steps
    s.push_back({m, 3072, 768, false});
  for (int64_t m : {1, 4})
    s.push_back({m, 768, 768, true});
  for (int64_t n : {64, 256, 512, 1024})
    s.push_back({n, n, n, false});
  s.push_back({257, 263, 269, false});
  s.push_back({97, 1031, 61, true});
  return s;
}

bool parse_shapes(const std::string& text, std::vector<Shape>* out) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    std::string one = text.substr(at, end - at);
    Shape s{};
    char t = 0;
    long long m = 0, n = 0, k = 0;
    int got = std::sscanf(one.c_str(), "%lldx%lldx%lld%c", &m, &n, &k, &t);
    if (got < 3 || m < 1 || n < 1 || k < 1 || (got == 4 && t != 't')) return false;
    s = {m, n, k, got == 4};
    out->push_back(s);
    at = end + 1;
  }
  return !out->empty();
}

double seconds(const std::chrono::steady_clock::time_point& a,
               const std::chrono::steady_clock::time_point& b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using Entry = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t);

// The largest |difference| relative to the largest |reference| entry.
double check(const Shape& s, const std::vector<float>& a, const std::vector<float>& b,
             const std::vector<float>& c) {
  double worst = 0, scale = 1e-30;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (int64_t q = 0; q < s.k; ++q)
        sum += double(a[i * s.k + q]) * (s.trans_b ? b[j * s.k + q] : b[q * s.n + j]);
      worst = std::max(worst, std::abs(sum - c[i * s.n + j]));
      scale = std::max(scale, std::abs(sum));
    }
  return worst / scale;
}

} // namespace

int main(int argc, char** argv) {
  // OpenBLAS's idle threads spin (sched_yield) for 2^28 cycles or so after each call, on the
  // cores dsc's calls then run on. Both sides should see quiet cores, so the process runs with
  // the shortest spin OpenBLAS allows; it reads the variable once, when it is loaded, hence
  // the re-exec.
  if (!std::getenv("OPENBLAS_THREAD_TIMEOUT")) {
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
    execv("/proc/self/exe", argv);
    std::perror("bench_gemm: re-exec with OPENBLAS_THREAD_TIMEOUT=4"); // runs on regardless
  }
  int threads = 1, reps = 20;
  bool do_check = false;
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> std::string {
      std::string prefix = std::string(name) + "=";
      if (arg.rfind(prefix, 0) == 0) return arg.substr(prefix.size());
      if (arg == name && i + 1 < argc) return argv[++i];
      std::fprintf(stderr, "bench_gemm: %s needs a value\n", name);
      std::exit(2);
    };
    if (arg.rfind("--threads", 0) == 0) {
      threads = std::atoi(value("--threads").c_str());
    } else if (arg.rfind("--reps", 0) == 0) {
      reps = std::atoi(value("--reps").c_str());
    } else if (arg.rfind("--shapes", 0) == 0) {
      if (!parse_shapes(value("--shapes"), &shapes)) {
        std::fprintf(stderr, "bench_gemm: --shapes takes MxNxK[t],... with positive sizes\n");
        return 2;
      }
    } else if (arg == "--check") {
      do_check = true;
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: bench_gemm [--threads N] [--reps R] [--shapes MxNxK[t],...] [--check]\n");
      return 0;
    } else {
      std::fprintf(stderr, "bench_gemm: unknown argument '%s' (try --help)\n", arg.c_str());
      return 2;
    }
  }
  if (threads < 1 || reps < 1) {
    std::fprintf(stderr, "bench_gemm: --threads and --reps must be positive\n");
    return 2;
  }
  if (shapes.empty()) shapes = default_shapes();
  dsc::runtime::set_global_num_threads(threads); // also OpenBLAS's
  std::printf("dsc kernels: %s; threads: %d (OpenBLAS %d); %d rounds per shape\n",
              dsc::runtime::gemm::kernels().isa, threads, dsc::runtime::blas_num_threads(), reps);
  std::printf("%-18s %10s %10s %8s\n", "m x n x k", "dsc GF/s", "blas GF/s", "dsc/blas");
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  double log_sum = 0;
  for (const Shape& s : shapes) {
    std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    const Entry entries[2] = {&dsc_rt_gemm_f32, &dsc_rt_matmul_f32};
    if (do_check)
      for (Entry e : entries) {
        e(a.data(), b.data(), c.data(), 1, s.m, s.n, s.k, 0, 0, s.trans_b);
        double err = check(s, a, b, c);
        if (err > 1e-5) {
          std::fprintf(stderr, "bench_gemm: %s is wrong at %lldx%lldx%lld: relative error %g\n",
                       e == &dsc_rt_gemm_f32 ? "dsc" : "blas", (long long)s.m, (long long)s.n,
                       (long long)s.k, err);
          return 1;
        }
      }
    // Blocks of reps / 3 calls per side, alternating, with a pause between blocks, so that
    // neither side runs while the other's idle threads still spin.
    std::vector<double> t[2];
    const int block = std::max(1, reps / 3);
    for (int done = 0; done < reps; done += block)
      for (int side = 0; side < 2; ++side) {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        entries[side](a.data(), b.data(), c.data(), 1, s.m, s.n, s.k, 0, 0, s.trans_b); // warm
        for (int r = done; r < std::min(reps, done + block); ++r) {
          auto t0 = std::chrono::steady_clock::now();
          entries[side](a.data(), b.data(), c.data(), 1, s.m, s.n, s.k, 0, 0, s.trans_b);
          t[side].push_back(seconds(t0, std::chrono::steady_clock::now()));
        }
      }
    double flops = 2.0 * s.m * s.n * s.k;
    double dsc = flops / median(t[0]) * 1e-9, blas = flops / median(t[1]) * 1e-9;
    char name[64];
    std::snprintf(name, sizeof name, "%lldx%lldx%lld%s", (long long)s.m, (long long)s.n,
                  (long long)s.k, s.trans_b ? "t" : "");
    std::printf("%-18s %10.1f %10.1f %8.2f\n", name, dsc, blas, dsc / blas);
    log_sum += std::log(dsc / blas);
  }
  std::printf("geomean dsc/blas: %.2f\n", std::exp(log_sum / shapes.size()));
  return 0;
}
