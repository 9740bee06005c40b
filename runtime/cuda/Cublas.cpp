#include "runtime/cuda/Cublas.h"

#include <dlfcn.h>

#include <limits>
#include <type_traits>
#include <utility>

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

bool plan_sgemm(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t a_batch_stride,
                int64_t b_batch_stride, bool trans_b, SgemmPlan* plan, std::string* error) {
  *plan = SgemmPlan{};
  if (batch < 0 || m < 0 || n < 0 || k < 0 || a_batch_stride < 0 || b_batch_stride < 0) return true;
  if (batch == 0 || m == 0 || n == 0) return true;
  int64_t mn = 0, count = 0;
  if (__builtin_mul_overflow(m, n, &mn) || __builtin_mul_overflow(mn, batch, &count))
    return fail(error, "C has " + std::to_string(batch) + " x " + std::to_string(m) + " x " +
                           std::to_string(n) + " elements, more than int64 counts");
  if (k == 0) {
    plan->action = SgemmPlan::Action::Zero;
    plan->zero_floats = count;
    return true;
  }
  const std::pair<const char*, int64_t> sizes[] = {{"batch", batch}, {"m", m}, {"n", n}, {"k", k}};
  for (const auto& [name, value] : sizes)
    if (value > kIntMax)
      return fail(error, std::string(name) + " = " + std::to_string(value) +
                             " does not fit cuBLAS's 32-bit int");
  plan->action = SgemmPlan::Action::Gemm;
  // cuBLAS's A is our B: stored k x n row-major, that is n x k column-major (ld n); with
  // trans_b it is stored n x k row-major, k x n column-major (ld k), and transposed.
  plan->transa = trans_b;
  plan->m = static_cast<int>(n);
  plan->n = static_cast<int>(m);
  plan->k = static_cast<int>(k);
  plan->lda = static_cast<int>(trans_b ? k : n);
  plan->ldb = static_cast<int>(k);
  plan->ldc = static_cast<int>(n);
  plan->stride_a = b_batch_stride;
  plan->stride_b = a_batch_stride;
  plan->stride_c = mn;
  plan->batch = static_cast<int>(batch);
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
  const char* candidates[] = {"libcublas.so.13", "libcublas.so.12",
                              "/usr/local/cuda/lib64/libcublas.so.13",
                              "/usr/local/cuda/lib64/libcublas.so.12", "libcublas.so"};
  void* library = nullptr;
  std::string tried;
  for (const char* name : candidates) {
    dlerror();
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library) {
      out.api.library = name;
      break;
    }
    const char* reason = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (reason ? reason : name);
  }
  if (!library) {
    out.error =
        "cuBLAS cannot be loaded (put libcublas.so.13 or .so.12 on the library path): " + tried;
    return out;
  }
  Cublas::Api& a = out.api;
  const char* missing = nullptr;
  auto need = [&](const char* name, auto* slot) {
    void* symbol = dlsym(library, name);
    *slot = reinterpret_cast<std::remove_reference_t<decltype(*slot)>>(symbol);
    if (!symbol && !missing) missing = name;
  };
  need("cublasCreate_v2", &a.create);
  need("cublasDestroy_v2", &a.destroy);
  need("cublasSetStream_v2", &a.set_stream);
  need("cublasSetMathMode", &a.set_math_mode);
  need("cublasSgemmStridedBatched", &a.sgemm_strided_batched);
  if (missing) {
    out.error = a.library + " lacks " + missing;
    return out;
  }
  // Since cuBLAS 11.4; messages fall back to the number without them.
  a.status_name =
      reinterpret_cast<const char* (*)(cublasStatus)>(dlsym(library, "cublasGetStatusName"));
  a.status_string =
      reinterpret_cast<const char* (*)(cublasStatus)>(dlsym(library, "cublasGetStatusString"));
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
  cublasStatus s = api_->sgemm_strided_batched(t.handle, plan.transa ? kCublasOpT : kCublasOpN,
                                               kCublasOpN, plan.m, plan.n, plan.k, &alpha, b,
                                               plan.lda, plan.stride_a, a, plan.ldb, plan.stride_b,
                                               &beta, c, plan.ldc, plan.stride_c, plan.batch);
  if (s != kCublasSuccess) return fail(error, api_->failed("cublasSgemmStridedBatched", s));
  return true;
}

} // namespace dsc::runtime::cuda
