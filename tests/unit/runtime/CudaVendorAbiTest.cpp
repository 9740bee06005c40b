// The runtime declares the parts of cuDNN's and cuBLASLt's ABI it uses by hand (Cudnn.cpp,
// CublasLt.cpp), so that it builds without the CUDA toolkit. Both libraries make and set their
// descriptors on the host, with no device, so this test reads back what the runtime set with
// the libraries' own headers and functions: every enum value, value size and argument order
// the runtime relies on short of running a kernel, and the meaning of each layout against our
// row-major product and the convolution's definition. Built only where the toolkit's headers
// and libraries are (tests/unit/CMakeLists.txt).
#include <cublasLt.h>
#include <cudnn.h>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/Cudnn.h"

namespace dsc::runtime::cuda {
namespace {

// The runtime's stand-ins for cublasLt.h's descriptor types (CublasLt.h) as cublasLt.h's.
cublasLtMatmulDesc_t real(cublasLtMatmulDescOpaque* d) {
  return reinterpret_cast<cublasLtMatmulDesc_t>(d);
}
cublasLtMatrixLayout_t real(cublasLtMatrixLayoutOpaque* d) {
  return reinterpret_cast<cublasLtMatrixLayout_t>(d);
}
cublasLtMatmulPreference_t real(cublasLtMatmulPreferenceOpaque* d) {
  return reinterpret_cast<cublasLtMatmulPreference_t>(d);
}

template <class T>
T product_attribute(const CublasLt::Descriptors& d, cublasLtMatmulDescAttributes_t a) {
  T value{};
  size_t written = 0;
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(real(d.product), a, &value, sizeof value, &written),
            CUBLAS_STATUS_SUCCESS)
      << "attribute " << a;
  EXPECT_EQ(written, sizeof value) << "attribute " << a;
  return value;
}

template <class T>
T layout_attribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t a) {
  T value{};
  size_t written = 0;
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout, a, &value, sizeof value, &written),
            CUBLAS_STATUS_SUCCESS)
      << "attribute " << a;
  EXPECT_EQ(written, sizeof value) << "attribute " << a;
  return value;
}

template <class T>
T preference_attribute(const CublasLt::Descriptors& d, cublasLtMatmulPreferenceAttributes_t a) {
  T value{};
  size_t written = 0;
  EXPECT_EQ(
      cublasLtMatmulPreferenceGetAttribute(real(d.preference), a, &value, sizeof value, &written),
      CUBLAS_STATUS_SUCCESS)
      << "attribute " << a;
  EXPECT_EQ(written, sizeof value) << "attribute " << a;
  return value;
}

// One stored column-major matrix as cuBLASLt reads it.
struct Layout {
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  int64_t batch_stride;
};

Layout read_layout(cublasLtMatrixLayout_t layout) {
  EXPECT_EQ(layout_attribute<uint32_t>(layout, CUBLASLT_MATRIX_LAYOUT_TYPE), CUDA_R_32F);
  EXPECT_EQ(layout_attribute<int32_t>(layout, CUBLASLT_MATRIX_LAYOUT_ORDER), CUBLASLT_ORDER_COL);
  return {layout_attribute<uint64_t>(layout, CUBLASLT_MATRIX_LAYOUT_ROWS),
          layout_attribute<uint64_t>(layout, CUBLASLT_MATRIX_LAYOUT_COLS),
          layout_attribute<int64_t>(layout, CUBLASLT_MATRIX_LAYOUT_LD),
          layout_attribute<int32_t>(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT),
          layout_attribute<int64_t>(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)};
}

// Our row-major `rows` x `cols` operand at strides (row, col), one of which is 1, as cuBLASLt
// must read it to compute our C^T = B^T A^T: its column-major view, which is the operand
// itself when the row stride is 1 (its transpose is then cuBLAS's op) and its transpose
// otherwise. Checks the layout's sizes and leading dimension and the transpose in `op`.
void expect_reads(const Layout& layout, int32_t op, int64_t rows, int64_t cols, int64_t row,
                  int64_t col, const std::string& what) {
  SCOPED_TRACE(what);
  if (col == 1) { // stored row-major: column-major it is the transpose, cols x rows
    EXPECT_EQ(op, CUBLAS_OP_N);
    EXPECT_EQ(layout.rows, static_cast<uint64_t>(cols));
    EXPECT_EQ(layout.cols, static_cast<uint64_t>(rows));
    EXPECT_EQ(layout.ld, row);
  } else { // its columns are contiguous: column-major it is itself, and cuBLAS transposes it
    EXPECT_EQ(op, CUBLAS_OP_T);
    EXPECT_EQ(layout.rows, static_cast<uint64_t>(rows));
    EXPECT_EQ(layout.cols, static_cast<uint64_t>(cols));
    EXPECT_EQ(layout.ld, col);
  }
}

struct Product {
  const char* name;
  dsc_strided_product p;
};

std::vector<Product> products() {
  std::vector<Product> out;
  out.push_back({"dense 7 x 5 @ 5 x 3", dense_product(1, 7, 3, 5, 0, 0, false)});
  out.push_back({"batch of 4, B shared and stored transposed",
                 dense_product(4, 13, 9, 11, 13 * 11, 0, true)});
  // Two batch dims (2 x 3) of 5 x 6 @ 6 x 4 inside wider rows: each call is the inner three.
  dsc_strided_product two{};
  two.batch = 6, two.inner = 3, two.m = 5, two.n = 4, two.k = 6;
  two.a_outer = 300, two.a_inner = 80, two.a_row = 8, two.a_col = 1;
  two.b_outer = 0, two.b_inner = 40, two.b_row = 1, two.b_col = 6;
  two.c_outer = 200, two.c_inner = 60, two.c_row = 7;
  out.push_back({"two batch dims, rows wider than the matrices", two});
  return out;
}

TEST(CudaVendorAbi, CublasLtReadsEachOperandAsOurRowMajorProduct) {
  std::string error;
  const CublasLt* lt = CublasLt::load(&error);
  if (!lt) GTEST_SKIP() << error;
  const std::pair<GemmEpilogue, cublasLtEpilogue_t> epilogues[] = {
      {GemmEpilogue::Bias, CUBLASLT_EPILOGUE_BIAS},
      {GemmEpilogue::BiasRelu, CUBLASLT_EPILOGUE_RELU_BIAS},
      {GemmEpilogue::BiasGeluTanh, CUBLASLT_EPILOGUE_GELU_BIAS}};
  for (const auto& [name, p] : products())
    for (const auto& [epilogue, expected] : epilogues) {
      SCOPED_TRACE(name);
      SgemmPlan plan;
      ASSERT_TRUE(plan_lt_sgemm(p, &plan, &error)) << error;
      ASSERT_EQ(plan.action, SgemmPlan::Action::Gemm);
      CublasLt::Descriptors d;
      ASSERT_TRUE(lt->describe(plan, epilogue, {16, 8, 256}, &d, &error)) << error;

      EXPECT_EQ(product_attribute<int32_t>(d, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE),
                CUBLAS_COMPUTE_32F);
      EXPECT_EQ(product_attribute<int32_t>(d, CUBLASLT_MATMUL_DESC_SCALE_TYPE), CUDA_R_32F);
      EXPECT_EQ(product_attribute<uint32_t>(d, CUBLASLT_MATMUL_DESC_EPILOGUE), expected);
      EXPECT_EQ(product_attribute<int64_t>(d, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE), 0);
      const int32_t transa = product_attribute<int32_t>(d, CUBLASLT_MATMUL_DESC_TRANSA);
      const int32_t transb = product_attribute<int32_t>(d, CUBLASLT_MATMUL_DESC_TRANSB);

      // cuBLAS's D (= C) is our C column-major: n x m, at our row stride; its bias, one value
      // per row of D, is one per column of ours.
      const Layout c = read_layout(real(d.c));
      EXPECT_EQ(c.rows, static_cast<uint64_t>(p.n));
      EXPECT_EQ(c.cols, static_cast<uint64_t>(p.m));
      EXPECT_EQ(c.ld, p.c_row);
      // cuBLAS's A is our B (k x n), its B our A (m x k).
      const Layout a = read_layout(real(d.a)), b = read_layout(real(d.b));
      expect_reads(a, transa, p.k, p.n, p.b_row, p.b_col, "cuBLAS's A, our B");
      expect_reads(b, transb, p.m, p.k, p.a_row, p.a_col, "cuBLAS's B, our A");
      // One call is the batch, its products the outer strides apart; with two batch dims, one
      // call is the inner dim, its products the inner strides apart.
      const bool inner = p.inner > 1;
      for (const auto& [layout, stride] : {std::pair{c, inner ? p.c_inner : p.c_outer},
                                           std::pair{a, inner ? p.b_inner : p.b_outer},
                                           std::pair{b, inner ? p.a_inner : p.a_outer}}) {
        EXPECT_EQ(layout.batch, inner ? p.inner : p.batch);
        if (layout.batch > 1) {
          EXPECT_EQ(layout.batch_stride, stride);
        }
      }

      EXPECT_EQ(preference_attribute<uint64_t>(d, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES),
                kLtWorkspaceBytes);
      EXPECT_EQ(preference_attribute<uint32_t>(d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES), 16u);
      EXPECT_EQ(preference_attribute<uint32_t>(d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES), 8u);
      EXPECT_EQ(preference_attribute<uint32_t>(d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES),
                256u);
      EXPECT_EQ(preference_attribute<uint32_t>(d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES),
                256u);
    }
}

// The window's positions along a dim, by cuDNN's own arithmetic: a 1-D convolution as a 4-D one
// of one row.
int cudnn_positions(int extent, int pad, int stride, int dilation, int window) {
  cudnnTensorDescriptor_t x;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnCreateTensorDescriptor(&x);
  cudnnCreateFilterDescriptor(&w);
  cudnnCreateConvolutionDescriptor(&conv);
  int n = 0, c = 0, h = 0, positions = -1;
  if (cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, extent) ==
          CUDNN_STATUS_SUCCESS &&
      cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 1, window) ==
          CUDNN_STATUS_SUCCESS &&
      cudnnSetConvolution2dDescriptor(conv, 0, pad, 1, stride, 1, dilation, CUDNN_CROSS_CORRELATION,
                                      CUDNN_DATA_FLOAT) == CUDNN_STATUS_SUCCESS &&
      cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &h, &positions) !=
          CUDNN_STATUS_SUCCESS)
    positions = -1;
  cudnnDestroyConvolutionDescriptor(conv);
  cudnnDestroyFilterDescriptor(w);
  cudnnDestroyTensorDescriptor(x);
  return positions;
}

Conv2d conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t kh, int64_t kw,
            int64_t groups, int64_t stride, int64_t pad, int64_t dilation) {
  const int64_t oh = (h + 2 * pad - dilation * (kh - 1) - 1) / stride + 1;
  const int64_t ow = (w + 2 * pad - dilation * (kw - 1) - 1) / stride + 1;
  return {n, c, h, w, o, kh, kw, oh, ow, groups, stride, stride, pad, pad, dilation, dilation};
}

TEST(CudaVendorAbi, CudnnDescribesEachConvolutionAsThePlanDoes) {
  std::string error;
  const Cudnn* cudnn = Cudnn::load(&error);
  if (!cudnn) GTEST_SKIP() << error;
  const Conv2d convs[] = {conv(1, 3, 224, 224, 64, 7, 7, 1, 2, 3, 1),
                          conv(2, 8, 13, 7, 8, 3, 3, 8, 1, 1, 1),  // depthwise
                          conv(3, 6, 61, 32, 9, 3, 3, 3, 2, 2, 2), // grouped, dilated, strided
                          conv(1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1)};
  Cudnn::Descriptors d; // reset by each describe()
  for (const Conv2d& p : convs) {
    SCOPED_TRACE(std::to_string(p.c) + " channels of " + std::to_string(p.h) + " x " +
                 std::to_string(p.w) + " in " + std::to_string(p.groups) + " groups");
    Conv2dPlan plan;
    ASSERT_TRUE(plan_conv2d(p, &plan, &error)) << error;
    ASSERT_TRUE(cudnn->describe(plan, &d, &error)) << error;

    cudnnDataType_t dtype{};
    int n, c, h, w, ns, cs, hs, ws;
    ASSERT_EQ(cudnnGetTensor4dDescriptor(d.x, &dtype, &n, &c, &h, &w, &ns, &cs, &hs, &ws),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(dtype, CUDNN_DATA_FLOAT);
    EXPECT_EQ((std::vector<int64_t>{n, c, h, w}), (std::vector<int64_t>{p.n, p.c, p.h, p.w}));
    EXPECT_EQ((std::vector<int64_t>{ns, cs, hs, ws}),
              (std::vector<int64_t>{p.c * p.h * p.w, p.h * p.w, p.w, 1}));
    ASSERT_EQ(cudnnGetTensor4dDescriptor(d.y, &dtype, &n, &c, &h, &w, &ns, &cs, &hs, &ws),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ((std::vector<int64_t>{n, c, h, w}), (std::vector<int64_t>{p.n, p.o, p.oh, p.ow}));
    EXPECT_EQ((std::vector<int64_t>{ns, cs, hs, ws}),
              (std::vector<int64_t>{p.o * p.oh * p.ow, p.oh * p.ow, p.ow, 1}));

    cudnnTensorFormat_t format{};
    ASSERT_EQ(cudnnGetFilter4dDescriptor(d.w, &dtype, &format, &n, &c, &h, &w),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(dtype, CUDNN_DATA_FLOAT);
    EXPECT_EQ(format, CUDNN_TENSOR_NCHW);
    EXPECT_EQ((std::vector<int64_t>{n, c, h, w}),
              (std::vector<int64_t>{p.o, p.c / p.groups, p.kh, p.kw}));

    int pad_h, pad_w, u, v, dil_h, dil_w, groups;
    cudnnConvolutionMode_t mode{};
    cudnnDataType_t compute{};
    ASSERT_EQ(cudnnGetConvolution2dDescriptor(d.conv, &pad_h, &pad_w, &u, &v, &dil_h, &dil_w, &mode,
                                              &compute),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ((std::vector<int64_t>{pad_h, pad_w, u, v, dil_h, dil_w}),
              (std::vector<int64_t>{p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dilation_h,
                                    p.dilation_w}));
    EXPECT_EQ(mode, CUDNN_CROSS_CORRELATION);
    EXPECT_EQ(compute, CUDNN_DATA_FLOAT);
    ASSERT_EQ(cudnnGetConvolutionGroupCount(d.conv, &groups), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(groups, p.groups);
    cudnnMathType_t math{};
    ASSERT_EQ(cudnnGetConvolutionMathType(d.conv, &math), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(math, CUDNN_FMA_MATH);

    // cuDNN's own result shape is the one the plan was checked against.
    ASSERT_EQ(cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &n, &c, &h, &w),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ((std::vector<int64_t>{n, c, h, w}), (std::vector<int64_t>{p.n, p.o, p.oh, p.ow}));
  }
}

// plan_conv2d's rule for the result's extent (and the emulator's loops, which follow the
// plan) against cuDNN's, over random extents, paddings, strides, dilations and windows: the
// plan takes cuDNN's extent and refuses one more.
TEST(CudaVendorAbi, PlanAgreesWithCudnnOnTheResultsExtent) {
  std::string error;
  if (!Cudnn::load(&error)) GTEST_SKIP() << error;
  std::mt19937 rng(11);
  auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  for (int i = 0; i < 500; ++i) {
    const int extent = draw(1, 40), pad = draw(0, 4), stride = draw(1, 5), dilation = draw(1, 4),
              window = draw(1, 6);
    const int positions = cudnn_positions(extent, pad, stride, dilation, window);
    SCOPED_TRACE("extent " + std::to_string(extent) + ", pad " + std::to_string(pad) + ", stride " +
                 std::to_string(stride) + ", dilation " + std::to_string(dilation) + ", window " +
                 std::to_string(window));
    Conv2d p{1, 1, 1, extent, 1, 1, window, 1, 0, 1, 1, stride, 0, pad, 1, dilation};
    Conv2dPlan plan;
    if (positions < 1) { // the window does not fit the padded input
      for (int64_t ow : {0, 1}) {
        p.ow = ow;
        EXPECT_FALSE(plan_conv2d(p, &plan, &error)) << "cuDNN refuses, the plan takes " << ow;
      }
      continue;
    }
    p.ow = positions;
    EXPECT_TRUE(plan_conv2d(p, &plan, &error)) << error;
    p.ow = positions + 1;
    EXPECT_FALSE(plan_conv2d(p, &plan, &error));
    ++checked;
  }
  EXPECT_GT(checked, 300); // most draws fit
}

} // namespace
} // namespace dsc::runtime::cuda
