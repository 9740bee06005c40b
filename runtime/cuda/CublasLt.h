#pragma once
// Library routines "cublaslt.sgemm_bias", "cublaslt.sgemm_bias_relu" and
// "cublaslt.sgemm_bias_gelu_tanh" on the GPU: cublas.sgemm's strided product with a bias added
// to each row and an activation applied by cuBLASLt (libcublasLt, loaded with dlopen on first
// use) in the GEMM's own epilogue, so the product is stored once, finished.
//
// - Arguments: cublas.sgemm's plan (Cublas.h: our row-major product as cuBLAS's column-major
//   one, C^T = B^T A^T), so cuBLASLt's bias, one value per row of its D, is one value per
//   column of our C. The matrix layouts carry the plan's leading dimensions, batch count and
//   batch strides; a batch of two dims is one call per outer index, as with cuBLAS.
// - Math: CUBLAS_COMPUTE_32F (FP32 multiply-adds, no TF32), as cublas.sgemm.
// - Algorithm: cuBLASLt's heuristics' first, with up to kLtWorkspaceBytes of workspace, for
//   the alignment the call's pointers have (the heuristics assume 256 bytes unless told),
//   remembered per thread with its descriptors; the workspace comes from the device's
//   stream-ordered allocator for the call (GpuDevice::sgemm_epilogue).
// - The activations: ReLU is max(x, 0); GELU is cuBLASLt's, the tanh approximation
//   x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), which is nn.gelu_tanh, not nn.gelu.
//   apply_epilogue_loops is the emulator's version of both.

#include <array>
#include <cstdint>
#include <string>

#include "runtime/cuda/Cublas.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/Device.h"

// What the descriptors point to. cublasLt.h's types are typedefs of unnamed structs, which
// cannot be declared here; these stand for them (CudaVendorAbiTest casts them back to read the
// descriptors with cuBLASLt's own functions).
struct cublasLtMatmulDescOpaque;
struct cublasLtMatrixLayoutOpaque;
struct cublasLtMatmulPreferenceOpaque;

namespace dsc::runtime::cuda {

// The most workspace cuBLASLt's heuristics may ask for.
constexpr uint64_t kLtWorkspaceBytes = uint64_t{32} << 20;

// cublas.sgemm's plan for `p`, refused when the depth is 0 (cuBLASLt's epilogue needs a
// product to finish; legalize only picks these routines where the depth is proved positive).
bool plan_lt_sgemm(const dsc_strided_product& p, SgemmPlan* plan, std::string* error);

// C = epilogue(C + bias) over the product's result through its strides, on the host: what the
// emulator runs after its GEMM. ReLU maps NaN to 0, as cuBLASLt's max(x, 0) is taken to.
void apply_epilogue_loops(const dsc_strided_product& p, GemmEpilogue epilogue, const float* bias,
                          float* c);

class CublasLt {
public:
  // libcublasLt.so.13, .so.12 (on the library path, then in /usr/local/cuda/lib64), loaded once
  // and never unloaded. Null with *error set ("cuBLASLt cannot be loaded: tried ...").
  static const CublasLt* load(std::string* error);

  struct Api; // the entry points (CublasLt.cpp)

  // One plan's descriptors, which cuBLASLt makes on the host, with no device: the product's
  // (compute and scale type, transposes, epilogue, one bias for the whole batch), the layouts
  // of cuBLAS's A, B and C (which is also D), and the heuristics' preference (the most
  // workspace, the alignment of A, B, C and D). Destroyed with the object.
  struct Descriptors {
    Descriptors() = default;
    Descriptors(const Descriptors&) = delete;
    Descriptors& operator=(const Descriptors&) = delete;
    ~Descriptors();
    const Api* api = nullptr;
    cublasLtMatmulDescOpaque* product = nullptr;
    cublasLtMatrixLayoutOpaque *a = nullptr, *b = nullptr, *c = nullptr;
    cublasLtMatmulPreferenceOpaque* preference = nullptr;
  };
  // Makes `out`'s descriptors (empty) for a Gemm plan with `epilogue` whose pointers to
  // cuBLAS's A, B and C are aligned to `alignment` bytes (powers of two, at most 256).
  bool describe(const SgemmPlan& plan, GemmEpilogue epilogue,
                const std::array<uint32_t, 3>& alignment, Descriptors* out,
                std::string* error) const;

  struct Choice {
    const void* prepared = nullptr; // the thread's descriptors and algorithm (CublasLt.cpp)
    uint64_t workspace_bytes = 0;
  };
  // The descriptors and algorithm for a Gemm plan with `epilogue` on the device pointers a, b
  // and c (an algorithm for the alignment they have), on the calling thread's handle (made on
  // first use, destroyed when the thread ends). The caller has made the device's context
  // current.
  bool choose(const SgemmPlan& plan, GemmEpilogue epilogue, const float* a, const float* b,
              const float* c, Choice* choice, std::string* error) const;
  // Runs the plan on `stream` with `choice`; `workspace` has choice.workspace_bytes of device
  // memory (null when 0). a, b, bias and c are device pointers.
  bool matmul(CUstream stream, const SgemmPlan& plan, const Choice& choice, const float* a,
              const float* b, const float* bias, float* c, void* workspace,
              std::string* error) const;

private:
  explicit CublasLt(const Api* api) : api_(api) {}
  const Api* api_;
};

} // namespace dsc::runtime::cuda
