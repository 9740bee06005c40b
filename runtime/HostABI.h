#pragma once
// The ABI between compiled code (kernels and host functions emitted by backends/cpu) and the
// runtime. Compiled code calls only the functions declared here, plus cblas_sgemm through
// dsc_rt_matmul_f32. Both the JIT (`dscc run FILE.dsc`) and built `.so` files use it.
//
// Kernels (one per prim):
//   void KERNEL(void* const* buffers, const int64_t* symbols);
//     buffers: the prim's inputs then its outputs, as data pointers (dense, row-major);
//     symbols: the values of ir::prim_signature_symbols(prim), in that order.
//
// Host functions (one per entry `fn`, emitted from an ir::HostProgram):
//   int32_t HOST(dsc_call* call, const DLTensor* const* inputs);
//     returns 0 on success; non-zero after one of the dsc_rt_fail_* / dsc_rt_check_input
//     calls below recorded the error in `call`. Outputs are allocated with dsc_rt_output.
//
// A built `.so` also exports `const char dsc_manifest[]`: the runtime::Manifest as JSON.

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Per-call state owned by the runtime: the function's manifest entry, the error message, the
// outputs allocated so far, the arena (runtime/HostCall.h). When several errors are recorded
// in one call, the first is kept.
typedef struct dsc_call dsc_call;

typedef void (*dsc_parallel_body)(void* context, int64_t begin, int64_t end);
// A kernel of the kernel ABI above (backends/llvm/KernelCodegen.h): buffers, then symbol values.
typedef void (*dsc_kernel_fn)(void* const* buffers, const int64_t* symbols);
typedef int32_t (*dsc_host_function)(dsc_call* call, const DLTensor* const* inputs);

// Runs body(context, b, e) over [0, n) split into chunks of at least `grain` iterations on the
// thread pool; returns when all are done. Runs inline when n <= grain or the pool has one
// thread. Nested calls (from inside a body) run inline. Bodies must not throw or longjmp.
void dsc_rt_parallel_for(dsc_parallel_body body, void* context, int64_t n, int64_t grain);

// Checks input `index`: not null, on the function's device (the manifest's: kDLCPU, or
// kDLCUDA device 0), dtype (code, bits, lanes 1), rank `ndim`, no negative dim, a byte size
// that fits int64, dense row-major (strides null or compact; a dim of size 1 may have any
// stride), and, unless it is empty, a non-null data pointer aligned to its element size once
// byte_offset is applied. Returns 0 when it is fine;
// else records "input 'mask' is f32[2, 7, 3]; expected f32[B, S] (rank 2)"-style errors (the
// types as the manifest writes them) and returns 1.
int32_t dsc_rt_check_input(dsc_call* call, int32_t index, const DLTensor* tensor, int32_t code,
                           int32_t bits, int32_t ndim);

// Records "input 'mask' dim 1 is 7, but it must equal <expected_text> = 9" and returns 1
// ("... must equal 9" when expected_text is null, empty or the number itself).
int32_t dsc_rt_fail_dim(dsc_call* call, int32_t index, int32_t axis, int64_t actual,
                        int64_t expected, const char* expected_text);

// Records "<what> violated: S = 600, B = 1 (<location>)" and returns 1. `what` is like
// "where S <= 512"; `location` like "bert_layer.dsc:5:28" (may be empty or null, and then the
// parenthesis is left out, as is ": ..." when num_symbols is 0).
int32_t dsc_rt_fail_check(dsc_call* call, const char* what, const char* location,
                          int32_t num_symbols, const char* const* names, const int64_t* values);

// Records "cannot allocate <what> of 'f' at n=3145728: its size overflows 64 bits" and
// returns 1. Host functions call it, before allocating, when the byte size of the arena or
// the dims of an output (`what`: "the arena", "output 0"), computed from the symbols,
// overflow int64.
int32_t dsc_rt_fail_overflow(dsc_call* call, const char* what);

// The data pointer of input `index` (its byte_offset applied; never dereferenced, so a device
// address works too).
void* dsc_rt_input_data(const DLTensor* tensor);

// The call's arena: `bytes` bytes, 64-byte aligned, uninitialised, valid until the call
// returns (0 bytes still gives a valid pointer). Call at most once per call. NULL (and an
// error recorded) when `bytes` is negative or more than the machine's memory, or the memory
// is not available. The memory is reused by the next call on the same thread (it is kept,
// and grown when a call needs more, until the thread ends).
void* dsc_rt_arena(dsc_call* call, int64_t bytes);

// Allocates output `index` with the given dtype and shape; returns its data pointer (64-byte
// aligned, uninitialised), or NULL with an error recorded: a negative dim, a size beyond the
// machine's memory, an index out of range or already allocated, or a dtype or rank other
// than the manifest's. Outputs may be allocated in any order; every one must be allocated
// before the host function returns 0.
void* dsc_rt_output(dsc_call* call, int32_t index, int32_t code, int32_t bits, int32_t ndim,
                    const int64_t* shape);

// C[b] = A[b] @ B[b] for b in [0, batch), row-major, f32: A[b] is m x k at a + b*a_batch_stride,
// B[b] is k x n at bm + b*b_batch_stride (a stride of 0 broadcasts), C[b] is m x n, dense.
// trans_b != 0 means B[b] is stored n x k (B transposed). Negative sizes or strides do
// nothing; k == 0 zeroes C. How it uses threads: runtime/Matmul.h.
void dsc_rt_matmul_f32(const float* a, const float* bm, float* c, int64_t batch, int64_t m,
                       int64_t n, int64_t k, int64_t a_batch_stride, int64_t b_batch_stride,
                       int64_t trans_b);

// The same product with dsc's own packed GEMM (runtime/gemm/Gemm.h), the same arguments.
void dsc_rt_gemm_f32(const float* a, const float* bm, float* c, int64_t batch, int64_t m,
                     int64_t n, int64_t k, int64_t a_batch_stride, int64_t b_batch_stride,
                     int64_t trans_b);

// Library routines take the buffer pointers, then their int64 scalars (ir/LibraryRoutines.def's
// `scalars_by`): one argument each (`Values`), or, for the strided products below
// (`Descriptor`), a pointer to one of these two structs. The host code fills a stack array of
// int64_t in the order the struct declares its fields, which is the order of
// ir/LibraryRoutine.h's SgemmScalar and SgemmChainScalar (backends/cpu/HostCodegen.cpp checks
// each field's offset against them), and passes its address. Every field is an int64_t, so
// there is no padding: field i is element i of the array. The routine reads it during the call
// only (it lives on the caller's stack) and never writes it.

// A batched product through strides: C[i] = A[i] @ B[i] for i in [0, batch), row-major f32,
// with A and B read through strides (in floats), so that a permuted or split operand needs no
// copy. Product i is (outer, inner) = (i / inner, i % inner) of a batch of at most two dims.
// Element (r, q) of A[i] is a[a_offset + outer * a_outer + inner * a_inner + r * a_row +
// q * a_col], element (q, j) of B[i] is bm[b_offset + outer * b_outer + inner * b_inner +
// q * b_row + j * b_col] (a batch stride of 0 shares the operand across that dim), and element
// (r, j) of C[i] is c[c_offset + outer * c_outer + inner * c_inner + r * c_row + j] (C written
// through strides, as a product whose heads go straight into a head-merged layout; its rows
// are contiguous). Negative sizes, strides or offsets, or inner < 1, do nothing; k == 0 zeroes
// C. dsc_rt_gemm_f32 and dsc_rt_matmul_f32 are the case inner = 1, dense rows.
typedef struct dsc_strided_product {
  int64_t batch, inner, m, n, k;                    // 0-4: the batch, its inner dim, the sizes
  int64_t a_offset, a_outer, a_inner, a_row, a_col; // 5-9: A
  int64_t b_offset, b_outer, b_inner, b_row, b_col; // 10-14: B
  int64_t c_offset, c_outer, c_inner, c_row;        // 15-18: C (its column stride is 1)
} dsc_strided_product;

// Two chained products, C = epilogue(A @ B) @ D (dsc_rt_gemm_chain_f32): A @ B is
// dsc_strided_product's product with the same batch, inner, m, n, k and A's and B's fields; its
// rows, a block at a time, are the A of the second product, whose B is D (n x n2, strides as
// B's) and whose result goes into C (offset, outer and inner batch strides, row stride; rows
// contiguous).
typedef struct dsc_strided_chain {
  int64_t batch, inner, m, n, k;                    // 0-4
  int64_t a_offset, a_outer, a_inner, a_row, a_col; // 5-9: A
  int64_t b_offset, b_outer, b_inner, b_row, b_col; // 10-14: B
  int64_t n2;                                       // 15: the columns of D and C
  int64_t d_offset, d_outer, d_inner, d_row, d_col; // 16-20: D
  int64_t c_offset, c_outer, c_inner, c_row;        // 21-24: C
} dsc_strided_chain;

#ifdef __cplusplus
static_assert(sizeof(dsc_strided_product) == 19 * sizeof(int64_t) &&
                  offsetof(dsc_strided_product, c_row) == 18 * sizeof(int64_t),
              "dsc_strided_product is 19 int64_t in a row");
static_assert(sizeof(dsc_strided_chain) == 25 * sizeof(int64_t) &&
                  offsetof(dsc_strided_chain, c_row) == 24 * sizeof(int64_t),
              "dsc_strided_chain is 25 int64_t in a row");
#endif

// A strided product's entry point: the operands, the result, the product's description.
typedef void dsc_strided_sgemm_fn(const float* a, const float* bm, float* c,
                                  const dsc_strided_product* product);

// Library routine "dsc.sgemm": the product over dsc's own GEMM.
dsc_strided_sgemm_fn dsc_rt_gemm_f32_strided;

// Library routine "dsc.conv2d": y = conv2d(x, w), x NCHW, w OIHW, y NCHW, all dense, by dsc's
// GEMM over the input's unrolled windows (runtime/Conv2d.cpp). The scalars are
// ir/LibraryRoutine.h's Conv2dScalar: the input's N, C, H, W, the weights' O, KH, KW, the
// result's OH, OW, then groups, stride, padding and dilation (each h, w but groups). Values that
// are no convolution (C or O not a multiple of groups, a stride below 1) do nothing.
void dsc_rt_conv2d_f32(const float* x, const float* w, float* y, int64_t n, int64_t c, int64_t h,
                       int64_t width, int64_t o, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                       int64_t groups, int64_t stride_h, int64_t stride_w, int64_t pad_h,
                       int64_t pad_w, int64_t dilation_h, int64_t dilation_w);

// Library routine "blas.sgemm": the product over OpenBLAS, which reads each matrix as itself or
// transposed, so one of its two strides should be 1 (other layouts run as plain loops).
dsc_strided_sgemm_fn dsc_rt_matmul_f32_strided;

// dsc_rt_gemm_f32_strided followed by an epilogue kernel over the product's rows: C is
// computed as by dsc_rt_gemm_f32_strided and, as soon as a block of rows of C is final (all
// columns, all depth), the GEMM calls `epilogue(buffers', symbols')` on that block, where
// buffers'[i] = buffers[i] + row0 * row_bytes[i] (row_bytes[i] == 0: a buffer not indexed by
// row, passed as is) and symbols' is `symbols` with symbols'[rows_slot] = the block's row
// count and, when first_row_slot >= 0, symbols'[first_row_slot] = the block's first row (row0,
// for an input indexed by a row's position in C rather than offset by rows). Rows are those of C viewed as (batch * m) x n, so C must be dense here: product i at
// c + i * m * n, rows n apart (with other strides the call does nothing). Every row gets exactly
// one call covering it, on whichever thread finished it, while it is still in cache (n == 0
// too: C has no elements, but its rows are final); blocks are disjoint, so calls may run at
// once. A null epilogue is dsc_rt_gemm_f32_strided. num_buffers <= 16, num_symbols <= 64,
// 0 <= rows_slot < num_symbols and first_row_slot < num_symbols (-1: none), which the compiler
// guarantees: anything else is reported on stderr and aborts the process.
void dsc_rt_gemm_f32_strided_epilogue(const float* a, const float* bm, float* c,
                                      const dsc_strided_product* product, dsc_kernel_fn epilogue,
                                      void* const* buffers, const int64_t* row_bytes,
                                      int64_t num_buffers, const int64_t* symbols,
                                      int64_t num_symbols, int64_t rows_slot,
                                      int64_t first_row_slot);

// Routines "dsc.gemm_bf16" and "dsc.gemm_f16": dsc_rt_gemm_f32_strided and its epilogue form
// with A, B and C in bf16 or f16 (their bits; strides in elements). Each element of C is the
// sum of the products accumulated in f32 and rounded once (runtime/gemm/HalfGemm.h); an
// epilogue runs on the rounded rows.
typedef void dsc_strided_half_gemm_fn(const uint16_t* a, const uint16_t* bm, uint16_t* c,
                                      const dsc_strided_product* product);
dsc_strided_half_gemm_fn dsc_rt_gemm_bf16_strided;
dsc_strided_half_gemm_fn dsc_rt_gemm_f16_strided;
void dsc_rt_gemm_bf16_strided_epilogue(const uint16_t* a, const uint16_t* bm, uint16_t* c,
                                       const dsc_strided_product* product,
                                       dsc_kernel_fn epilogue, void* const* buffers,
                                       const int64_t* row_bytes, int64_t num_buffers,
                                       const int64_t* symbols, int64_t num_symbols,
                                       int64_t rows_slot, int64_t first_row_slot);
void dsc_rt_gemm_f16_strided_epilogue(const uint16_t* a, const uint16_t* bm, uint16_t* c,
                                      const dsc_strided_product* product, dsc_kernel_fn epilogue,
                                      void* const* buffers, const int64_t* row_bytes,
                                      int64_t num_buffers, const int64_t* symbols,
                                      int64_t num_symbols, int64_t rows_slot,
                                      int64_t first_row_slot);

// Routines "dsc.gemm_q8" and "dsc.gemm_q4" (matmul_q; runtime/gemm/QuantGemm.h): y [m, n] =
// x [m, k] @ W^T, all dense, W's row j holding k values of 8 bits (w + j * k) or 4 bits (two a
// byte, the low nibble first, a nibble u meaning u - 8; w + j * k / 2) and `groups` f16 scales
// (scales + j * groups), value q scaled by its group's (q / (k / groups)). Sizes that are no
// such product (k not a multiple of groups, an odd k at 4 bits, negative) do nothing.
void dsc_rt_gemm_q8_f32(const float* x, const int8_t* w, const uint16_t* scales, float* y,
                        int64_t m, int64_t n, int64_t k, int64_t groups);
void dsc_rt_gemm_q4_f32(const float* x, const int8_t* w, const uint16_t* scales, float* y,
                        int64_t m, int64_t n, int64_t k, int64_t groups);

// Routine "dsc.sgemm_chain": C = epilogue(A @ B) @ D over a batch of products, a block of A's
// rows at a time (runtime/gemm/Chain.cpp), so A @ B (attention's scores) is never stored whole.
// `chain` describes both products (dsc_strided_chain); each block of rows of A @ B lies dense in
// a buffer of the calling thread. A negative offset or stride: the call does nothing.
void dsc_rt_gemm_chain_f32(const float* a, const float* b, const float* d, float* c,
                           const dsc_strided_chain* chain);

// dsc_rt_gemm_chain_f32 with an epilogue on each block of A @ B before it is multiplied by D,
// as dsc_rt_gemm_f32_strided_epilogue's on the rows of its C: rows are those of A @ B viewed
// as (batch * m) x n, the last buffer is the block itself (passed as is: the pointer given is
// not used), the others offset by rows or passed whole, with the block's row count and first
// row in their slots. The same limits hold.
void dsc_rt_gemm_chain_f32_epilogue(const float* a, const float* b, const float* d, float* c,
                                    const dsc_strided_chain* chain, dsc_kernel_fn epilogue,
                                    void* const* buffers, const int64_t* row_bytes,
                                    int64_t num_buffers, const int64_t* symbols,
                                    int64_t num_symbols, int64_t rows_slot, int64_t first_row_slot);

/* ---- CUDA: functions whose manifest device is "cuda" (dscc build --target=cuda) ----
 *
 * Their inputs and outputs are kDLCUDA tensors, and dsc_rt_arena and dsc_rt_output give
 * device memory. Kernels, copies and library routines are queued on the calling thread's
 * stream; the runtime waits for the stream before the call returns, and reports an error a
 * kernel raised then. With DSC_CUDA_SYNC=1 it waits after every launch, so that an error
 * names the kernel. The device is the first GPU through the driver API (libcuda.so.1,
 * loaded with dlopen), or the block emulator when DSC_CUDA_EMULATE=1
 * (runtime/cuda/Emulator.h): the same CUDA C run on the CPU, one fiber per thread. */

/* One compiled form of a module's kernels. */
typedef struct dsc_cuda_image {
  int32_t arch;   /* 80 for sm_80 (a cubin), or for compute_80 (PTX) */
  int32_t is_ptx; /* 1: PTX text (NUL-terminated), which the driver compiles for newer GPUs */
  const void* data;
  int64_t size;   /* bytes of data (PTX: including the NUL) */
} dsc_cuda_image;

/* The kernels of one compiled module, as the host code embeds them. The runtime loads the
 * image that fits the device (the cubin of its architecture, else of the highest one of its
 * major version below it, else the PTX) on the first launch, and keeps it in `loaded`. */
typedef struct dsc_cuda_module {
  const char* name;   /* for errors: the module's name */
  int32_t num_images;
  const dsc_cuda_image* images;
  const char* source; /* the CUDA C the images were compiled from (the emulator compiles it) */
  void* loaded;       /* the runtime's; null until the first launch */
} dsc_cuda_module;

/* Launches `kernel` (an extern "C" __global__ function of `module`) on a grid of
 * grid_x * grid_y * grid_z blocks of block_x * block_y * block_z threads, with `shared_bytes`
 * of dynamic shared memory. Its arguments are the buffers' device pointers, then the int64
 * symbols (`long long` in CUDA C), in order. The emulator calls `dsc_emu_<kernel>(buffers,
 * symbols)` instead, once per thread. Returns 0, or 1 with an error naming the kernel and
 * the call recorded (an empty grid launches nothing and returns 0). */
int32_t dsc_rt_cuda_launch(dsc_call* call, dsc_cuda_module* module, const char* kernel,
                           int64_t grid_x, int64_t grid_y, int64_t grid_z, int64_t block_x,
                           int64_t block_y, int64_t block_z, int64_t shared_bytes,
                           void* const* buffers, int32_t num_buffers, const int64_t* symbols,
                           int32_t num_symbols);

/* How many threads the call's device keeps resident at once (multiprocessors times threads
 * per multiprocessor; the emulator's is 2048), into *threads, for launch rules that compare a
 * grid with the device (backends/cuda/CudaSource.h). 0, or 1 with an error recorded. */
int32_t dsc_rt_cuda_resident_threads(dsc_call* call, int64_t* threads);

/* Copies `bytes` bytes of device memory from src to dst on the call's stream. 0, or 1 with an
 * error recorded. */
int32_t dsc_rt_cuda_copy(dsc_call* call, void* dst, const void* src, int64_t bytes);

/* Copies `bytes` bytes of device memory at src to host memory at dst, once the call's stream
 * has run up to here (an if's condition, nonzero's count). 0, or 1 with an error recorded. */
int32_t dsc_rt_cuda_read(dsc_call* call, void* dst, const void* src, int64_t bytes);

/* Library routine "cublas.sgemm": dsc_strided_product's product on device memory through
 * cuBLAS (libcublas, loaded with dlopen), on the call's stream; each operand must have one of
 * its two strides 1. CUDA routines take the call first and return 0, or 1 with an error
 * recorded (a null `product` too). */
int32_t dsc_rt_cublas_sgemm_f32(dsc_call* call, const float* a, const float* bm, float* c,
                                const dsc_strided_product* product);

/* Library routines "cublaslt.sgemm_bias", "cublaslt.sgemm_bias_relu" and
 * "cublaslt.sgemm_bias_gelu_tanh": cublas.sgemm's product, then C = act(C + bias) with `bias`
 * one value per column of C, in cuBLASLt's epilogue (libcublasLt, loaded with dlopen); the
 * depth k must be at least 1. 0, or 1 with an error recorded. */
typedef int32_t dsc_cublaslt_sgemm_fn(dsc_call* call, const float* a, const float* bm,
                                      const float* bias, float* c,
                                      const dsc_strided_product* product);
dsc_cublaslt_sgemm_fn dsc_rt_cublaslt_sgemm_bias_f32;
dsc_cublaslt_sgemm_fn dsc_rt_cublaslt_sgemm_bias_relu_f32;
dsc_cublaslt_sgemm_fn dsc_rt_cublaslt_sgemm_bias_gelu_tanh_f32;

/* Library routine "cudnn.conv2d": y = conv2d(x, w) through cuDNN (libcudnn.so.9, loaded with
 * dlopen) on the call's stream; x is NCHW, w OIHW, y NCHW, all dense. The scalars are
 * ir/LibraryRoutine.h's Conv2dScalar: the input's N, C, H, W, the weights' O, KH, KW, the
 * result's OH, OW, then groups, stride, padding and dilation (each h, w but groups). 0, or 1
 * with an error recorded. */
int32_t dsc_rt_cudnn_conv2d_f32(dsc_call* call, const float* x, const float* w, float* y, int64_t n,
                                int64_t c, int64_t h, int64_t width, int64_t o, int64_t kh,
                                int64_t kw, int64_t oh, int64_t ow, int64_t groups,
                                int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
                                int64_t dilation_h, int64_t dilation_w);

#ifdef __cplusplus
}
#endif
