#include "runtime/cuda/Cublas.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "runtime/cuda/VendorLibrary.h"

namespace dsc::runtime::cuda {

namespace {

using cublasHandle = struct cublasContext*;
using cublasStatus = int;
constexpr cublasStatus kCublasSuccess = 0;
constexpr int kCublasOpN = 0;
constexpr int kCublasOpT = 1;
constexpr int kCublasDefaultMath = 0;

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

} // namespace

struct Cublas::Api {
  cublasStatus (*create)(cublasHandle* handle);
  cublasStatus (*destroy)(cublasHandle handle);
  cublasStatus (*set_stream)(cublasHandle handle, CUstream stream);
  cublasStatus (*set_math_mode)(cublasHandle handle, int mode);
  cublasStatus (*sgemm_strided_batched)(cublasHandle handle, int transa, int transb, int m, int n,
                                        int k, const float* alpha, const float* a, int lda,
                                        long long stride_a, const float* b, int ldb,
                                        long long stride_b, const float* beta, float* c, int ldc,
                                        long long stride_c, int batch);
  const char* (*status_name)(cublasStatus status);
  const char* (*status_string)(cublasStatus status);
  std::string library;

  // "cublasCreate failed: CUBLAS_STATUS_NOT_INITIALIZED (the library was not initialized)".
  std::string failed(const char* call, cublasStatus status) const {
    const char* name = status_name ? status_name(status) : nullptr;
    const char* text = status_string ? status_string(status) : nullptr;
    std::string s =
        std::string(call) + " failed: " + (name ? name : "cublasStatus " + std::to_string(status));
    if (text && *text) s += std::string(" (") + text + ")";
    return s;
  }
};

namespace {

// Our row-major `rows` x `cols` operand with strides (row, col), as cuBLAS reads its transpose
// (cols x rows, column-major): as stored (op N) with ld = row when col == 1, else transposed
// (op T, the stored matrix rows x cols) with ld = col when row == 1. A stride over a dim of
// extent 1 never steps, so it is free.
struct ColumnMajor {
  bool transposed = false;
  int64_t ld = 1;
};

bool column_major(const char* name, int64_t rows, int64_t cols, int64_t row, int64_t col,
                  ColumnMajor* out, std::string* error) {
  if (rows == 0 || cols == 0) { // read nowhere (k == 0)
    *out = {false, std::max<int64_t>(cols, 1)};
    return true;
  }
  if (cols == 1) col = 1;
  if (rows == 1) row = std::max<int64_t>(cols, 1);
  if (col == 1) {
    *out = {false, row};
    if (row < std::max<int64_t>(cols, 1))
      return fail(error, std::string(name) + "'s rows are " + std::to_string(row) +
                             " apart, closer than a row of " + std::to_string(cols) + " is long");
    return true;
  }
  if (row == 1) {
    *out = {true, col};
    if (col < std::max<int64_t>(rows, 1))
      return fail(error, std::string(name) + "'s columns are " + std::to_string(col) +
                             " apart, closer than a column of " + std::to_string(rows) + " is long");
    return true;
  }
  return fail(error, std::string(name) + " has neither stride 1 (row " + std::to_string(row) +
                         ", column " + std::to_string(col) +
                         "): cuBLAS reads a matrix or its transpose");
}

bool fits_int(const char* name, int64_t value, std::string* error) {
  if (value <= kIntMax) return true;
  return fail(error, std::string(name) + " = " + std::to_string(value) +
                         " does not fit cuBLAS's 32-bit int");
}

} // namespace

bool plan_sgemm(const dsc_strided_product& p, SgemmPlan* plan, std::string* error) {
  *plan = SgemmPlan{};
  if (p.batch < 0 || p.m < 0 || p.n < 0 || p.k < 0 || !layout_valid(p)) return true;
  if (p.inner < 1 || p.batch == 0 || p.m == 0 || p.n == 0) return true;
  if (p.batch % p.inner != 0)
    return fail(error, "a batch of " + std::to_string(p.batch) + " is no whole number of its inner " +
                           "dim of " + std::to_string(p.inner));
  int64_t mn = 0, count = 0;
  if (__builtin_mul_overflow(p.m, p.n, &mn) || __builtin_mul_overflow(mn, p.batch, &count))
    return fail(error, "C has " + std::to_string(p.batch) + " x " + std::to_string(p.m) + " x " +
                           std::to_string(p.n) + " elements, more than int64 counts");
  const int64_t outer = p.batch / p.inner;
  // C dense: rows of n, products one after another.
  const bool c_dense = (p.m == 1 || p.c_row == p.n) && (p.inner == 1 || p.c_inner == mn) &&
                       (outer == 1 || p.c_outer == mn * p.inner);
  if (p.k == 0 && c_dense) {
    plan->action = SgemmPlan::Action::Zero;
    plan->zero_floats = count;
    plan->offset_c = p.c_offset;
    return true;
  }
  ColumnMajor a, b, c;
  if (!column_major("B", p.k, p.n, p.b_row, p.b_col, &b, error) ||
      !column_major("A", p.m, p.k, p.a_row, p.a_col, &a, error) ||
      !column_major("C", p.m, p.n, p.c_row, 1, &c, error))
    return false;
  const std::pair<const char*, int64_t> sizes[] = {
      {"m", p.m}, {"n", p.n}, {"k", p.k}, {"the inner batch", p.inner}, {"B's leading dimension", b.ld},
      {"A's leading dimension", a.ld}, {"C's leading dimension", c.ld}};
  for (const auto& [name, value] : sizes)
    if (!fits_int(name, value, error)) return false;
  plan->action = SgemmPlan::Action::Gemm;
  plan->transa = b.transposed;
  plan->transb = a.transposed;
  plan->m = static_cast<int>(p.n);
  plan->n = static_cast<int>(p.m);
  plan->k = static_cast<int>(p.k);
  plan->lda = static_cast<int>(b.ld);
  plan->ldb = static_cast<int>(a.ld);
  plan->ldc = static_cast<int>(c.ld);
  plan->offset_a = p.b_offset;
  plan->offset_b = p.a_offset;
  plan->offset_c = p.c_offset;
  // One call over the whole batch when it has one dim; else a call per outer index over the
  // inner dim.
  const bool one_dim = p.inner == 1;
  if (!one_dim && !fits_int("the inner batch", p.inner, error)) return false;
  if (one_dim && !fits_int("the batch", p.batch, error)) return false;
  plan->batch = static_cast<int>(one_dim ? p.batch : p.inner);
  plan->calls = one_dim ? 1 : outer;
  plan->stride_a = one_dim ? p.b_outer : p.b_inner;
  plan->stride_b = one_dim ? p.a_outer : p.a_inner;
  plan->stride_c = one_dim ? p.c_outer : p.c_inner;
  plan->step_a = p.b_outer;
  plan->step_b = p.a_outer;
  plan->step_c = p.c_outer;
  return true;
}

namespace {

// The calling thread's handle; destroyed when the thread ends.
struct ThreadHandle {
  const Cublas::Api* api = nullptr;
  cublasHandle handle = nullptr;
  CUstream stream = nullptr;
  ~ThreadHandle() {
    if (handle) api->destroy(handle);
  }
};
thread_local ThreadHandle t_handle;

struct Loaded {
  Cublas::Api api{};
  std::string error;
};

Loaded load_api() {
  Loaded out;
  VendorLibrary library({"libcublas.so.13", "libcublas.so.12",
                         "/usr/local/cuda/lib64/libcublas.so.13",
                         "/usr/local/cuda/lib64/libcublas.so.12", "libcublas.so"},
                        "cuBLAS", "put libcublas.so.13 or .so.12 on the library path");
  Cublas::Api& a = out.api;
  library.find("cublasCreate_v2", &a.create);
  library.find("cublasDestroy_v2", &a.destroy);
  library.find("cublasSetStream_v2", &a.set_stream);
  library.find("cublasSetMathMode", &a.set_math_mode);
  library.find("cublasSgemmStridedBatched", &a.sgemm_strided_batched);
  // Since cuBLAS 11.4; messages fall back to the number without them.
  library.find("cublasGetStatusName", &a.status_name, false);
  library.find("cublasGetStatusString", &a.status_string, false);
  a.library = library.name();
  out.error = library.error();
  return out;
}

} // namespace

const Cublas* Cublas::load(std::string* error) {
  static const Loaded* loaded = new Loaded(load_api()); // never freed, as the library
  static const Cublas* cublas = loaded->error.empty() ? new Cublas(&loaded->api) : nullptr;
  if (!cublas && error) *error = loaded->error;
  return cublas;
}

bool Cublas::sgemm(CUstream stream, const SgemmPlan& plan, const float* a, const float* b, float* c,
                   std::string* error) const {
  if (plan.action != SgemmPlan::Action::Gemm) return true;
  ThreadHandle& t = t_handle;
  if (!t.handle) {
    cublasHandle handle = nullptr;
    cublasStatus s = api_->create(&handle);
    if (s != kCublasSuccess) return fail(error, api_->failed("cublasCreate", s));
    s = api_->set_math_mode(handle, kCublasDefaultMath);
    if (s != kCublasSuccess) {
      api_->destroy(handle);
      return fail(error, api_->failed("cublasSetMathMode", s));
    }
    t.api = api_;
    t.handle = handle;
    t.stream = nullptr;
  }
  if (t.stream != stream || !t.stream) {
    cublasStatus s = api_->set_stream(t.handle, stream);
    if (s != kCublasSuccess) return fail(error, api_->failed("cublasSetStream", s));
    t.stream = stream;
  }
  const float alpha = 1.0f, beta = 0.0f;
  // cuBLAS's A is our B, its B our A (Cublas.h).
  for (int64_t i = 0; i < plan.calls; ++i) {
    cublasStatus s = api_->sgemm_strided_batched(
        t.handle, plan.transa ? kCublasOpT : kCublasOpN, plan.transb ? kCublasOpT : kCublasOpN,
        plan.m, plan.n, plan.k, &alpha, b + plan.offset_a + i * plan.step_a, plan.lda,
        plan.stride_a, a + plan.offset_b + i * plan.step_b, plan.ldb, plan.stride_b, &beta,
        c + plan.offset_c + i * plan.step_c, plan.ldc, plan.stride_c, plan.batch);
    if (s != kCublasSuccess) return fail(error, api_->failed("cublasSgemmStridedBatched", s));
  }
  return true;
}

} // namespace dsc::runtime::cuda
