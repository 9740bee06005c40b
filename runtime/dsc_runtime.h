/* dsc_runtime.h: the public C API for running models compiled by `dscc build`.
 *
 *   dsc_model* m = dsc_model_load("bert.so");
 *   if (!m) { fprintf(stderr, "%s\n", dsc_last_error()); return 1; }
 *   const DLTensor* inputs[14] = {...};          // in parameter order, CPU, dense row-major
 *   DLManagedTensor* outputs[4]; int n = 0;
 *   if (dsc_model_run(m, "layer", inputs, 14, outputs, 4, &n) != 0) { ... dsc_last_error() ... }
 *   ... outputs[i]->dl_tensor ...; outputs[i]->deleter(outputs[i]);
 *   dsc_model_free(m);
 *
 * Shapes are dynamic: every call may use different sizes for the model's symbolic dims, as
 * long as its `where` clauses hold; a violated clause is an error return, never a crash.
 * Errors are reported per thread through dsc_last_error(). One model may be run from several
 * threads at once.
 *
 * Functions built with `dscc build --target=cuda` run on the first GPU (or on the CUDA block
 * emulator when DSC_CUDA_EMULATE=1): their inputs must be kDLCUDA tensors on device 0, and
 * their outputs are kDLCUDA tensors. Each call runs on the calling thread's own stream and
 * waits for it before returning, so inputs may be reused and outputs read at once, from any
 * stream. dsc_tensor_copy moves tensors between the host and the GPU. */
#ifndef DSC_RUNTIME_H
#define DSC_RUNTIME_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dsc_model dsc_model;

/* The message of the last failed call on this thread ("" when none). Successful calls leave
 * it as it was. The pointer is valid until the next failing call on this thread. */
const char* dsc_last_error(void);

/* Loads a model built by `dscc build`. NULL on failure (see dsc_last_error). */
dsc_model* dsc_model_load(const char* path);
void dsc_model_free(dsc_model* model);

/* The entry functions of the model, and their parameters (names, types as text such as
 * "f32[B, S, 768]"). Indices are 0-based; out-of-range queries return NULL or -1. */
int dsc_model_num_functions(const dsc_model* model);
const char* dsc_model_function_name(const dsc_model* model, int function);
int dsc_model_num_params(const dsc_model* model, const char* function);
const char* dsc_model_param_name(const dsc_model* model, const char* function, int param);
const char* dsc_model_param_type(const dsc_model* model, const char* function, int param);

/* Runs `function` on `inputs` (one per parameter, in order). On success returns 0, stores
 * the results in outputs[0 .. *num_outputs) (the caller releases each through its deleter;
 * they stay valid after dsc_model_free) and returns 0. On failure (including max_outputs
 * smaller than the function's number of outputs) returns non-zero and stores nothing, not
 * even *num_outputs. */
int dsc_model_run(dsc_model* model, const char* function, const DLTensor* const* inputs,
                  int num_inputs, DLManagedTensor** outputs, int max_outputs, int* num_outputs);

/* Declares the `bytes` bytes at `data` constant until dsc_release_constant(data): the caller
 * promises not to change them meanwhile. A matmul whose weight operand lies in such memory
 * packs it once, on first use, and reuses the packed copy (as large as the weight) in later
 * calls, as an inference engine packs its initializers once. Returns 0, or non-zero (see
 * dsc_last_error) for NULL data, zero bytes, or memory overlapping a range already declared.
 * dsc_release_constant frees the packed copies; it returns non-zero when no range starts at
 * `data`. */
int dsc_declare_constant(const void* data, size_t bytes);
int dsc_release_constant(const void* data);

/* The size of the runtime's thread pool, the calling thread included (default:
 * DSC_NUM_THREADS when it is a positive integer, else the CPUs this process may run on).
 * dsc_set_num_threads(n) with n < 1 restores the default; it also sets OpenBLAS's thread
 * count, and waits for a running parallel loop to end. */
void dsc_set_num_threads(int num_threads);
int dsc_get_num_threads(void);

/* Whether CUDA functions can run: 0 when the device is usable; else non-zero with the reason
 * in dsc_last_error ("no CUDA device: libcuda.so.1 cannot be loaded (...)"). The device is
 * set up on the first call and the answer is kept for the process. */
int dsc_cuda_available(void);

/* A dense copy of `src` on `device_type`: kDLCPU or kDLCUDA (device 0). `src` is on kDLCPU or
 * kDLCUDA device 0, dense row-major (strides NULL or compact), with any byte_offset. The copy
 * is complete when the function returns; the caller releases it through its deleter. NULL on
 * failure (see dsc_last_error). */
DLManagedTensor* dsc_tensor_copy(const DLTensor* src, int device_type);

#ifdef __cplusplus
}
#endif

#endif /* DSC_RUNTIME_H */
