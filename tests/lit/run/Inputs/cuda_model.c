/* A hand-written CUDA model with the shape of what `dscc build --target=cuda` emits
 * (runtime/HostABI.h): host functions that allocate device memory, copy, launch a kernel of an
 * embedded PTX module and call cuBLAS. dsc_run.test builds it with the C compiler (the runtime's
 * functions are resolved when dsc-run loads it) and checks the error on a machine without a
 * GPU; on a GPU the same file runs.
 *
 *   scale(x: f32[N]) -> f32[N]                               y = 2 * x (kernel scale2)
 *   matmul(a: f32[B, M, K], b: f32[K, N]) -> f32[B, M, N]    c = a @ b (cublas.sgemm) */
#include <stdint.h>

#include "runtime/HostABI.h"

const char dsc_manifest[] =
    "{\"version\":7,\"functions\":["
    "{\"name\":\"scale\",\"host_symbol\":\"cuda_model_scale\",\"device\":\"cuda\","
    "\"params\":[{\"name\":\"x\",\"dtype\":\"f32\",\"dims\":[\"N\"]}],"
    "\"outputs\":[{\"name\":\"output0\",\"dtype\":\"f32\",\"dims\":[\"N\"],\"updates_param\":-1}],"
    "\"where_clauses\":[],\"arena_bytes\":\"N*4\",\"peak_bytes\":\"N*4\"},"
    "{\"name\":\"matmul\",\"host_symbol\":\"cuda_model_matmul\",\"device\":\"cuda\","
    "\"params\":[{\"name\":\"a\",\"dtype\":\"f32\",\"dims\":[\"B\",\"M\",\"K\"]},"
    "{\"name\":\"b\",\"dtype\":\"f32\",\"dims\":[\"K\",\"N\"]}],"
    "\"outputs\":[{\"name\":\"output0\",\"dtype\":\"f32\",\"dims\":[\"B\",\"M\",\"N\"],\"updates_param\":-1}],"
    "\"where_clauses\":[],\"arena_bytes\":\"0\",\"peak_bytes\":\"0\"}"
    "]}";

/* y[i] = 2 * x[i] for i < n, one thread per element. */
static const char kPtx[] =
    ".version 7.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry scale2(.param .u64 x, .param .u64 y, .param .u64 n)\n"
    "{\n"
    "  .reg .pred %p;\n"
    "  .reg .b32 %r<5>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %f<3>;\n"
    "  ld.param.u64 %rd1, [x];\n"
    "  ld.param.u64 %rd2, [y];\n"
    "  ld.param.u64 %rd3, [n];\n"
    "  mov.u32 %r1, %ctaid.x;\n"
    "  mov.u32 %r2, %ntid.x;\n"
    "  mov.u32 %r3, %tid.x;\n"
    "  mad.lo.s32 %r4, %r1, %r2, %r3;\n"
    "  cvt.s64.s32 %rd4, %r4;\n"
    "  setp.ge.s64 %p, %rd4, %rd3;\n"
    "  @%p bra DONE;\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  cvta.to.global.u64 %rd2, %rd2;\n"
    "  shl.b64 %rd5, %rd4, 2;\n"
    "  add.s64 %rd6, %rd1, %rd5;\n"
    "  add.s64 %rd7, %rd2, %rd5;\n"
    "  ld.global.f32 %f1, [%rd6];\n"
    "  add.f32 %f2, %f1, %f1;\n"
    "  st.global.f32 [%rd7], %f2;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

static const dsc_cuda_image kImages[] = {{50, 1, kPtx, sizeof kPtx}};
static dsc_cuda_module g_module = {"cuda_model", 1, kImages, "", 0};

int32_t cuda_model_scale(dsc_call* call, const DLTensor* const* inputs) {
  if (dsc_rt_check_input(call, 0, inputs[0], kDLFloat, 32, 1)) return 1;
  int64_t n = inputs[0]->shape[0];
  void* arena = dsc_rt_arena(call, n * 4);
  if (!arena) return 1;
  void* y = dsc_rt_output(call, 0, kDLFloat, 32, 1, &n);
  if (!y) return 1;
  if (dsc_rt_cuda_copy(call, arena, dsc_rt_input_data(inputs[0]), n * 4)) return 1;
  void* buffers[2];
  buffers[0] = arena;
  buffers[1] = y;
  return dsc_rt_cuda_launch(call, &g_module, "scale2", (n + 255) / 256, 1, 1, 256, 1, 1, 0,
                            buffers, 2, &n, 1);
}

int32_t cuda_model_matmul(dsc_call* call, const DLTensor* const* inputs) {
  if (dsc_rt_check_input(call, 0, inputs[0], kDLFloat, 32, 3)) return 1;
  if (dsc_rt_check_input(call, 1, inputs[1], kDLFloat, 32, 2)) return 1;
  int64_t b = inputs[0]->shape[0], m = inputs[0]->shape[1], k = inputs[0]->shape[2];
  int64_t n = inputs[1]->shape[1];
  if (inputs[1]->shape[0] != k) return dsc_rt_fail_dim(call, 1, 0, inputs[1]->shape[0], k, "K");
  int64_t shape[3];
  shape[0] = b;
  shape[1] = m;
  shape[2] = n;
  float* c = (float*)dsc_rt_output(call, 0, kDLFloat, 32, 3, shape);
  if (!c) return 1;
  /* batch b, inner 1, m, n, k; A dense per batch element; B shared; C dense. */
  const dsc_strided_product product = {b, 1, m, n, k, 0, m * k, 0, k, 1,
                                       0, 0, 0, n, 1, 0, m * n, 0, n};
  return dsc_rt_cublas_sgemm_f32(call, (const float*)dsc_rt_input_data(inputs[0]),
                                 (const float*)dsc_rt_input_data(inputs[1]), c, &product);
}
