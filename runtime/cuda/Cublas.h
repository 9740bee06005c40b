#pragma once
// Library routine "cublas.sgemm" on the GPU: dsc.sgemm's row-major product through strides
// (HostABI.h's dsc_strided_product) by cuBLAS (libcublas, loaded with dlopen on first use).
// cuBLAS is column-major, and a row-major matrix read column-major is its transpose, so
// C = A @ B is computed as C^T = B^T @ A^T: cuBLAS's A is our B, its B our A, and its m and n
// are our n and m. An operand whose columns are at stride 1 is read as it is, with its row
// stride as the leading dimension; one whose rows are at stride 1 is read transposed, with its
// column stride as the leading dimension. C's row stride is its leading dimension. A batch of
// two dims (heads of a batch of sequences) is one strided-batched call per outer index.
//
// The math mode stays CUBLAS_DEFAULT_MATH (FP32 multiply-adds, no TF32 tensor cores), so
// results agree with the CPU's to FP32 rounding. cuBLAS's sizes are int: a product whose
// sizes or leading dimensions do not fit is an error, not a silent truncation.

#include <cstdint>
#include <string>

#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/Device.h"

namespace dsc::runtime::cuda {

// The cublasSgemmStridedBatched calls of one call of the routine: `calls` of them (the outer
// batch dim when the batch has two), the i-th on the operands advanced by i times the steps.
struct SgemmPlan {
  enum class Action : uint8_t {
    Nothing, // a negative size, stride or offset, or an empty C
    Zero,    // k == 0 and C dense: C is zeroed (zero_floats elements from offset_c)
    Gemm,
  };
  Action action = Action::Nothing;
  int64_t zero_floats = 0;
  // In cuBLAS's terms: its A is our B, its B our A. transa: our B is read with its rows at
  // stride 1 (stored transposed); transb: the same for our A.
  bool transa = false, transb = false;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
  int64_t offset_a = 0, offset_b = 0, offset_c = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0; // between the products of one call
  int batch = 0;                                    // products per call
  int64_t calls = 0;
  int64_t step_a = 0, step_b = 0, step_c = 0; // between calls
};

// The plan for `p` (HostABI.h's dsc_strided_product). False with *error set when cuBLAS cannot
// run it: a size or leading dimension beyond its 32-bit int ("m = 3000000000 does not fit
// cuBLAS's 32-bit int"), an operand with neither stride 1, rows closer than a row is long, or
// a batch that is not a whole number of its inner dim. Errors here and from sgemm() do not name
// the routine; the caller does.
bool plan_sgemm(const dsc_strided_product& p, SgemmPlan* plan, std::string* error);

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
