/* The C API's cost per call of a tiny model, the baseline of bench/python/call_overhead.py.
 *
 *   call_overhead MODEL.so FUNCTION N CALLS
 *
 * Calls FUNCTION (one f32[N] parameter) CALLS times after 1000 warm-up calls, releasing each
 * output, and prints the median over 15 repetitions of the mean time per call, in ns. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/dsc_runtime.h"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int run(dsc_model* m, const char* fn, const DLTensor* in) {
  DLManagedTensor* out[4];
  int n = 0;
  if (dsc_model_run(m, fn, &in, 1, out, 4, &n) != 0) {
    fprintf(stderr, "call_overhead: %s\n", dsc_last_error());
    return 1;
  }
  for (int i = 0; i < n; ++i) out[i]->deleter(out[i]);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: call_overhead MODEL.so FUNCTION N CALLS\n");
    return 2;
  }
  dsc_model* m = dsc_model_load(argv[1]);
  if (!m) {
    fprintf(stderr, "call_overhead: %s\n", dsc_last_error());
    return 1;
  }
  int64_t n = atoll(argv[3]);
  long calls = atol(argv[4]);
  float* data = calloc((size_t)n, sizeof(float));
  int64_t shape[1] = {n};
  DLTensor x = {data, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  for (int i = 0; i < 1000; ++i)
    if (run(m, argv[2], &x)) return 1;
  double per_call[15];
  for (int r = 0; r < 15; ++r) {
    double t0 = now_ns();
    for (long i = 0; i < calls; ++i)
      if (run(m, argv[2], &x)) return 1;
    per_call[r] = (now_ns() - t0) / (double)calls;
  }
  qsort(per_call, 15, sizeof(double), compare);
  printf("%.1f\n", per_call[7]);
  free(data);
  dsc_model_free(m);
  return 0;
}
