#pragma once
// Library routine "cublas.sgemm" on the GPU: dsc_rt_matmul_f32's row-major product (HostABI.h)
// through cuBLAS (libcublas, loaded with dlopen on first use). cuBLAS is column-major, and a
// row-major matrix read column-major is its transpose, so C = A @ B is computed as
// C^T = B^T @ A^T: cuBLAS's A is our B, its B our A, and its m and n are our n and m.
//
// The math mode stays CUBLAS_DEFAULT_MATH (FP32 multiply-adds, no TF32 tensor cores), so
// results agree with the CPU's to FP32 rounding. cuBLAS's sizes are int: a product whose
// sizes or leading dimensions do not fit is an error, not a silent truncation.

#include <cstdint>
#include <string>

#include "runtime/cuda/CudaDriver.h"

namespace dsc::runtime::cuda {

// cublasSgemmStridedBatched's arguments for one call of the routine.
struct SgemmPlan {
  enum class Action : uint8_t {
    Nothing, // a negative size or stride, or an empty C
    Zero,    // k == 0: C is zeroed (zero_floats elements)
    Gemm,
  };
  Action action = Action::Nothing;
  int64_t zero_floats = 0;
  // In cuBLAS's terms. transa: its A (our B) is transposed, i.e. our B is stored n x k.
  bool transa = false;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  int batch = 0;
};

// The plan for C[b] = A[b] @ B[b] with dsc_rt_matmul_f32's arguments. False with *error set
// ("m = 3000000000 does not fit cuBLAS's 32-bit int") when a size does not fit cuBLAS's int
// or the element count of C overflows int64. Errors here and from sgemm() do not name the
// routine; the caller does.
bool plan_sgemm(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t a_batch_stride,
                int64_t b_batch_stride, bool trans_b, SgemmPlan* plan, std::string* error);

class Cublas {
public:
  // libcublas.so.13, .so.12 (on the library path, then in /usr/local/cuda/lib64), loaded once
  // and never unloaded. Null with *error set ("cuBLAS cannot be loaded: tried ...").
  static const Cublas* load(std::string* error);

  // Runs a Gemm plan on `stream` with the calling thread's cuBLAS handle (made on first use,
  // bound to the stream, destroyed when the thread ends). The caller has made the device's
  // context current. a, b and c are device pointers.
  bool sgemm(CUstream stream, const SgemmPlan& plan, const float* a, const float* b, float* c,
             std::string* error) const;

  struct Api; // the entry points (Cublas.cpp)

private:
  explicit Cublas(const Api* api) : api_(api) {}
  const Api* api_;
};

} // namespace dsc::runtime::cuda
