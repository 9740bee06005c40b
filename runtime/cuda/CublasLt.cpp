#include "runtime/cuda/CublasLt.h"

#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <utility>

#include "runtime/cuda/VendorLibrary.h"

namespace dsc::runtime::cuda {

namespace {

using cublasLtHandle = struct cublasLtContext*;
using cublasLtMatmulDesc = struct cublasLtMatmulDescOpaque*;
using cublasLtMatrixLayout = struct cublasLtMatrixLayoutOpaque*;
using cublasLtMatmulPreference = struct cublasLtMatmulPreferenceOpaque*;
using cublasStatus = int;

// cublasLt.h's, cublas_api.h's and library_types.h's enum values.
constexpr cublasStatus kSuccess = 0;
constexpr int kCudaR32F = 0;
constexpr int kComputeFloat = 68; // CUBLAS_COMPUTE_32F: no TF32
constexpr int kOpN = 0, kOpT = 1;
constexpr int kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8,
              kDescBiasBatchStride = 10;
constexpr int kLayoutBatchCount = 5, kLayoutBatchOffset = 6;
constexpr int kPreferenceMaxWorkspace = 1;
constexpr int kPreferenceAlignmentA = 5; // then B, C and D
constexpr uint64_t kMostAlignment = 256; // cuBLASLt's default assumption
constexpr int kEpilogueBias = 4, kEpilogueReluBias = 2 | 4, kEpilogueGeluBias = 32 | 4;

// cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t.
struct Algorithm {
  uint64_t data[8];
};
struct HeuristicResult {
  Algorithm algorithm;
  size_t workspace_bytes;
  cublasStatus state;
  float waves;
  int reserved[4];
};

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

int lt_epilogue(GemmEpilogue e) {
  switch (e) {
  case GemmEpilogue::Bias:
    return kEpilogueBias;
  case GemmEpilogue::BiasRelu:
    return kEpilogueReluBias;
  case GemmEpilogue::BiasGeluTanh:
    return kEpilogueGeluBias;
  }
  return kEpilogueBias;
}

} // namespace

bool plan_lt_sgemm(const dsc_strided_product& p, SgemmPlan* plan, std::string* error) {
  if (!plan_sgemm(p, plan, error)) return false;
  if (plan->action == SgemmPlan::Action::Nothing) return true;
  if (p.k == 0) return fail(error, "cuBLASLt's epilogue needs a depth of at least 1 (k = 0)");
  return true;
}

void apply_epilogue_loops(const dsc_strided_product& p, GemmEpilogue epilogue, const float* bias,
                          float* c) {
  if (p.batch <= 0 || p.m <= 0 || p.n <= 0 || p.inner <= 0) return;
  for (int64_t i = 0; i < p.batch; ++i) {
    float* ci = c + p.c_offset + (i / p.inner) * p.c_outer + (i % p.inner) * p.c_inner;
    for (int64_t row = 0; row < p.m; ++row)
      for (int64_t col = 0; col < p.n; ++col) {
        float& v = ci[row * p.c_row + col];
        const float x = v + bias[col];
        switch (epilogue) {
        case GemmEpilogue::Bias:
          v = x;
          break;
        case GemmEpilogue::BiasRelu:
          v = x > 0.0f ? x : 0.0f;
          break;
        case GemmEpilogue::BiasGeluTanh:
          v = x * 0.5f * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
          break;
        }
      }
  }
}

struct CublasLt::Api {
  cublasStatus (*create)(cublasLtHandle* handle);
  cublasStatus (*destroy)(cublasLtHandle handle);
  cublasStatus (*desc_create)(cublasLtMatmulDesc* desc, int compute, int scale);
  cublasStatus (*desc_destroy)(cublasLtMatmulDesc desc);
  cublasStatus (*desc_set)(cublasLtMatmulDesc desc, int attribute, const void* value, size_t bytes);
  cublasStatus (*layout_create)(cublasLtMatrixLayout* layout, int type, uint64_t rows,
                                uint64_t cols, int64_t ld);
  cublasStatus (*layout_destroy)(cublasLtMatrixLayout layout);
  cublasStatus (*layout_set)(cublasLtMatrixLayout layout, int attribute, const void* value,
                             size_t bytes);
  cublasStatus (*preference_create)(cublasLtMatmulPreference* preference);
  cublasStatus (*preference_destroy)(cublasLtMatmulPreference preference);
  cublasStatus (*preference_set)(cublasLtMatmulPreference preference, int attribute,
                                 const void* value, size_t bytes);
  cublasStatus (*heuristic)(cublasLtHandle handle, cublasLtMatmulDesc desc, cublasLtMatrixLayout a,
                            cublasLtMatrixLayout b, cublasLtMatrixLayout c, cublasLtMatrixLayout d,
                            cublasLtMatmulPreference preference, int requested,
                            HeuristicResult* results, int* returned);
  cublasStatus (*matmul)(cublasLtHandle handle, cublasLtMatmulDesc desc, const void* alpha,
                         const void* a, cublasLtMatrixLayout a_layout, const void* b,
                         cublasLtMatrixLayout b_layout, const void* beta, const void* c,
                         cublasLtMatrixLayout c_layout, void* d, cublasLtMatrixLayout d_layout,
                         const Algorithm* algorithm, void* workspace, size_t workspace_bytes,
                         CUstream stream);
  const char* (*status_name)(cublasStatus status);
  std::string library;

  // "cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED".
  std::string failed(const char* call, cublasStatus status) const {
    const char* name = status_name ? status_name(status) : nullptr;
    return std::string(call) +
           " failed: " + (name ? std::string(name) : "cublasStatus " + std::to_string(status));
  }
};

namespace {

// One plan's descriptors and algorithm on a thread.
struct Prepared {
  CublasLt::Descriptors descriptors;
  Algorithm algorithm{};
  uint64_t workspace_bytes = 0;
};

using Key = std::array<int64_t, 16>;

Key key_of(const SgemmPlan& p, GemmEpilogue e, const std::array<uint32_t, 3>& alignment) {
  const int64_t epilogue = static_cast<int64_t>(e);
  return {epilogue, p.transa,     p.transb,     p.m,         p.n,        p.k,
          p.lda,    p.ldb,        p.ldc,        p.stride_a,  p.stride_b, p.stride_c,
          p.batch,  alignment[0], alignment[1], alignment[2]};
}

// The alignment in bytes (a power of two, at most 256) of every pointer the plan's calls pass
// for one matrix: `base` advanced by its offset, by its stride between the products of a call
// and by its step between calls. cuBLASLt's heuristics assume 256 unless told, and an
// algorithm picked for more than the pointers have fails.
uint32_t alignment(const float* base, int64_t offset, int64_t stride, int64_t step,
                   const SgemmPlan& p) {
  uint64_t bits = reinterpret_cast<uintptr_t>(base + offset) | kMostAlignment;
  if (p.batch > 1) bits |= static_cast<uint64_t>(stride) * sizeof(float);
  if (p.calls > 1) bits |= static_cast<uint64_t>(step) * sizeof(float);
  return static_cast<uint32_t>(bits & (~bits + 1));
}

// The calling thread's handle and prepared plans; destroyed when the thread ends.
struct ThreadState {
  const CublasLt::Api* api = nullptr;
  cublasLtHandle handle = nullptr;
  std::map<Key, std::unique_ptr<Prepared>> prepared;
  ~ThreadState() {
    prepared.clear();
    if (handle) api->destroy(handle);
  }
};
thread_local ThreadState t_state;

struct Loaded {
  CublasLt::Api api{};
  std::string error;
};

Loaded load_api() {
  Loaded out;
  VendorLibrary library({"libcublasLt.so.13", "libcublasLt.so.12",
                         "/usr/local/cuda/lib64/libcublasLt.so.13",
                         "/usr/local/cuda/lib64/libcublasLt.so.12", "libcublasLt.so"},
                        "cuBLASLt", "put libcublasLt.so.13 or .so.12 on the library path");
  CublasLt::Api& a = out.api;
  library.find("cublasLtCreate", &a.create);
  library.find("cublasLtDestroy", &a.destroy);
  library.find("cublasLtMatmulDescCreate", &a.desc_create);
  library.find("cublasLtMatmulDescDestroy", &a.desc_destroy);
  library.find("cublasLtMatmulDescSetAttribute", &a.desc_set);
  library.find("cublasLtMatrixLayoutCreate", &a.layout_create);
  library.find("cublasLtMatrixLayoutDestroy", &a.layout_destroy);
  library.find("cublasLtMatrixLayoutSetAttribute", &a.layout_set);
  library.find("cublasLtMatmulPreferenceCreate", &a.preference_create);
  library.find("cublasLtMatmulPreferenceDestroy", &a.preference_destroy);
  library.find("cublasLtMatmulPreferenceSetAttribute", &a.preference_set);
  library.find("cublasLtMatmulAlgoGetHeuristic", &a.heuristic);
  library.find("cublasLtMatmul", &a.matmul);
  library.find("cublasLtGetStatusName", &a.status_name, false);
  a.library = library.name();
  out.error = library.error();
  return out;
}

// A stored column-major matrix of rows x cols at leading dimension ld, `batch` of them
// `stride` apart.
bool make_layout(const CublasLt::Api* api, int rows, int cols, int ld, int batch, int64_t stride,
                 cublasLtMatrixLayout* layout, std::string* error) {
  cublasStatus s = api->layout_create(layout, kCudaR32F, static_cast<uint64_t>(rows),
                                      static_cast<uint64_t>(cols), ld);
  if (s != kSuccess) return fail(error, api->failed("cublasLtMatrixLayoutCreate", s));
  const int32_t count = batch;
  s = api->layout_set(*layout, kLayoutBatchCount, &count, sizeof count);
  if (s == kSuccess) s = api->layout_set(*layout, kLayoutBatchOffset, &stride, sizeof stride);
  if (s != kSuccess) return fail(error, api->failed("cublasLtMatrixLayoutSetAttribute", s));
  return true;
}

} // namespace

const CublasLt* CublasLt::load(std::string* error) {
  static const Loaded* loaded = new Loaded(load_api()); // never freed, as the library
  static const CublasLt* lt = loaded->error.empty() ? new CublasLt(&loaded->api) : nullptr;
  if (!lt && error) *error = loaded->error;
  return lt;
}

CublasLt::Descriptors::~Descriptors() {
  if (preference) api->preference_destroy(preference);
  for (cublasLtMatrixLayout layout : {c, b, a})
    if (layout) api->layout_destroy(layout);
  if (product) api->desc_destroy(product);
}

bool CublasLt::describe(const SgemmPlan& plan, GemmEpilogue epilogue,
                        const std::array<uint32_t, 3>& alignment, Descriptors* out,
                        std::string* error) const {
  out->api = api_;
  cublasStatus s = api_->desc_create(&out->product, kComputeFloat, kCudaR32F);
  if (s != kSuccess) {
    out->product = nullptr;
    return fail(error, api_->failed("cublasLtMatmulDescCreate", s));
  }
  // cuBLAS's A is our B, its B our A (Cublas.h); its m x n D is our C transposed.
  const int32_t transa = plan.transa ? kOpT : kOpN, transb = plan.transb ? kOpT : kOpN;
  const uint32_t mode = lt_epilogue(epilogue);
  const int64_t bias_stride = 0; // one bias for every product of the batch
  const std::pair<int, std::pair<const void*, size_t>> attributes[] = {
      {kDescTransA, {&transa, sizeof transa}},
      {kDescTransB, {&transb, sizeof transb}},
      {kDescEpilogue, {&mode, sizeof mode}},
      {kDescBiasBatchStride, {&bias_stride, sizeof bias_stride}}};
  for (const auto& [attribute, value] : attributes) {
    s = api_->desc_set(out->product, attribute, value.first, value.second);
    if (s != kSuccess) return fail(error, api_->failed("cublasLtMatmulDescSetAttribute", s));
  }
  const int a_rows = plan.transa ? plan.k : plan.m, a_cols = plan.transa ? plan.m : plan.k;
  const int b_rows = plan.transb ? plan.n : plan.k, b_cols = plan.transb ? plan.k : plan.n;
  if (!make_layout(api_, a_rows, a_cols, plan.lda, plan.batch, plan.stride_a, &out->a, error) ||
      !make_layout(api_, b_rows, b_cols, plan.ldb, plan.batch, plan.stride_b, &out->b, error) ||
      !make_layout(api_, plan.m, plan.n, plan.ldc, plan.batch, plan.stride_c, &out->c, error))
    return false;
  s = api_->preference_create(&out->preference);
  if (s != kSuccess) {
    out->preference = nullptr;
    return fail(error, api_->failed("cublasLtMatmulPreferenceCreate", s));
  }
  const uint64_t most = kLtWorkspaceBytes;
  s = api_->preference_set(out->preference, kPreferenceMaxWorkspace, &most, sizeof most);
  // A, B, C and D (which is C).
  const uint32_t alignments[] = {alignment[0], alignment[1], alignment[2], alignment[2]};
  for (int i = 0; i < 4 && s == kSuccess; ++i)
    s = api_->preference_set(out->preference, kPreferenceAlignmentA + i, &alignments[i],
                             sizeof alignments[i]);
  if (s != kSuccess) return fail(error, api_->failed("cublasLtMatmulPreferenceSetAttribute", s));
  return true;
}

bool CublasLt::choose(const SgemmPlan& plan, GemmEpilogue epilogue, const float* a, const float* b,
                      const float* c, Choice* choice, std::string* error) const {
  ThreadState& t = t_state;
  if (!t.handle) {
    cublasStatus s = api_->create(&t.handle);
    if (s != kSuccess) {
      t.handle = nullptr;
      return fail(error, api_->failed("cublasLtCreate", s));
    }
    t.api = api_;
  }
  // cuBLAS's A is our B, its B our A (Cublas.h).
  const std::array<uint32_t, 3> aligned = {
      alignment(b, plan.offset_a, plan.stride_a, plan.step_a, plan),
      alignment(a, plan.offset_b, plan.stride_b, plan.step_b, plan),
      alignment(c, plan.offset_c, plan.stride_c, plan.step_c, plan)};
  const Key key = key_of(plan, epilogue, aligned);
  if (auto it = t.prepared.find(key); it != t.prepared.end()) {
    *choice = Choice{it->second.get(), it->second->workspace_bytes};
    return true;
  }
  auto p = std::make_unique<Prepared>();
  if (!describe(plan, epilogue, aligned, &p->descriptors, error)) return false;
  const Descriptors& d = p->descriptors;
  HeuristicResult result{};
  int returned = 0;
  const cublasStatus s =
      api_->heuristic(t.handle, d.product, d.a, d.b, d.c, d.c, d.preference, 1, &result, &returned);
  if (s != kSuccess) return fail(error, api_->failed("cublasLtMatmulAlgoGetHeuristic", s));
  if (returned < 1 || result.state != kSuccess)
    return fail(error, "cuBLASLt offers no algorithm for this product and epilogue");
  p->algorithm = result.algorithm;
  p->workspace_bytes = result.workspace_bytes;
  *choice = Choice{p.get(), p->workspace_bytes};
  t.prepared.emplace(key, std::move(p));
  return true;
}

bool CublasLt::matmul(CUstream stream, const SgemmPlan& plan, const Choice& choice, const float* a,
                      const float* b, const float* bias, float* c, void* workspace,
                      std::string* error) const {
  if (plan.action != SgemmPlan::Action::Gemm) return true;
  const Descriptors& d = static_cast<const Prepared*>(choice.prepared)->descriptors;
  const Algorithm& algorithm = static_cast<const Prepared*>(choice.prepared)->algorithm;
  cublasStatus s = api_->desc_set(d.product, kDescBiasPointer, &bias, sizeof bias);
  if (s != kSuccess) return fail(error, api_->failed("cublasLtMatmulDescSetAttribute", s));
  const float alpha = 1.0f, beta = 0.0f;
  for (int64_t i = 0; i < plan.calls; ++i) {
    float* ci = c + plan.offset_c + i * plan.step_c;
    s = api_->matmul(t_state.handle, d.product, &alpha, b + plan.offset_a + i * plan.step_a, d.a,
                     a + plan.offset_b + i * plan.step_b, d.b, &beta, ci, d.c, ci, d.c, &algorithm,
                     workspace, choice.workspace_bytes, stream);
    if (s != kSuccess) return fail(error, api_->failed("cublasLtMatmul", s));
  }
  return true;
}

} // namespace dsc::runtime::cuda
