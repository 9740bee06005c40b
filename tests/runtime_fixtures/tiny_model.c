/* A hand-written model with the shape of what `dscc build` emits (runtime/HostABI.h): host
 * functions, a parallel kernel, a matmul, an arena and a `dsc_manifest`. The runtime's tests
 * and the C example load it as a `.so`.
 *
 *   add_one(x: f32[n]) -> f32[n]                        y = x + 1
 *   scale_rows(x: f32[B, D], w: f32[D]) -> (f32[B, D], f32[B])  where B <= 64
 *                                                       y = x * w (rows), s = x @ w
 *   forgets_output(x: f32[n]) -> f32[n]                 returns 0 without allocating y (a bug)
 *   fails_silently(x: f32[n]) -> f32[n]                 returns 1 without an error (a bug)
 *
 * Built with -DDSC_FIXTURE_BROKEN=N, it is one of the broken models the loader must refuse:
 *   1: no dsc_manifest symbol       2: a manifest that is not JSON
 *   3: a manifest naming a missing host symbol
 *   4: a dsc_manifest array without a NUL terminator */
#include <stdint.h>

#include "runtime/HostABI.h"

#if !defined(DSC_FIXTURE_BROKEN)
const char dsc_manifest[] =
    "{\"version\":7,\"functions\":["
    "{\"name\":\"add_one\",\"host_symbol\":\"tiny_add_one\",\"device\":\"cpu\","
    "\"params\":[{\"name\":\"x\",\"dtype\":\"f32\",\"dims\":[\"n\"]}],"
    "\"outputs\":[{\"name\":\"output0\",\"dtype\":\"f32\",\"dims\":[\"n\"],\"updates_param\":-1}],"
    "\"where_clauses\":[],\"arena_bytes\":\"0\",\"peak_bytes\":\"0\"},"
    "{\"name\":\"scale_rows\",\"host_symbol\":\"tiny_scale_rows\",\"device\":\"cpu\","
    "\"params\":[{\"name\":\"x\",\"dtype\":\"f32\",\"dims\":[\"B\",\"D\"]},"
    "{\"name\":\"w\",\"dtype\":\"f32\",\"dims\":[\"D\"]}],"
    "\"outputs\":[{\"name\":\"output0\",\"dtype\":\"f32\",\"dims\":[\"B\",\"D\"],\"updates_param\":-1},"
    "{\"name\":\"output1\",\"dtype\":\"f32\",\"dims\":[\"B\"],\"updates_param\":-1}],"
    "\"where_clauses\":[],\"arena_bytes\":\"B*D*4\",\"peak_bytes\":\"B*D*4\"},"
    "{\"name\":\"forgets_output\",\"host_symbol\":\"tiny_forgets_output\",\"device\":\"cpu\","
    "\"params\":[{\"name\":\"x\",\"dtype\":\"f32\",\"dims\":[\"n\"]}],"
    "\"outputs\":[{\"name\":\"output0\",\"dtype\":\"f32\",\"dims\":[\"n\"],\"updates_param\":-1}],"
    "\"where_clauses\":[],\"arena_bytes\":\"0\",\"peak_bytes\":\"0\"},"
    "{\"name\":\"fails_silently\",\"host_symbol\":\"tiny_fails_silently\",\"device\":\"cpu\","
    "\"params\":[{\"name\":\"x\",\"dtype\":\"f32\",\"dims\":[\"n\"]}],"
    "\"outputs\":[{\"name\":\"output0\",\"dtype\":\"f32\",\"dims\":[\"n\"],\"updates_param\":-1}],"
    "\"where_clauses\":[],\"arena_bytes\":\"0\",\"peak_bytes\":\"0\"}"
    "]}";
#elif DSC_FIXTURE_BROKEN == 2
const char dsc_manifest[] = "{\"version\": 7, \"functions\": [";
#elif DSC_FIXTURE_BROKEN == 3
const char dsc_manifest[] =
    "{\"version\":7,\"functions\":[{\"name\":\"add_one\",\"host_symbol\":\"not_defined_here\",\"device\":\"cpu\","
    "\"params\":[],\"outputs\":[],\"where_clauses\":[],\"arena_bytes\":\"0\",\"peak_bytes\":\"0\"}]}";
#elif DSC_FIXTURE_BROKEN == 4
const char dsc_manifest[2] = {'{', '}'};
#endif

struct add_one_args {
  const float* x;
  float* y;
};

static void add_one_body(void* context, int64_t begin, int64_t end) {
  const struct add_one_args* a = (const struct add_one_args*)context;
  for (int64_t i = begin; i < end; ++i)
    a->y[i] = a->x[i] + 1.0f;
}

int32_t tiny_add_one(dsc_call* call, const DLTensor* const* inputs) {
  if (dsc_rt_check_input(call, 0, inputs[0], kDLFloat, 32, 1)) return 1;
  int64_t n = inputs[0]->shape[0];
  struct add_one_args a;
  a.x = (const float*)dsc_rt_input_data(inputs[0]);
  a.y = (float*)dsc_rt_output(call, 0, kDLFloat, 32, 1, &n);
  if (!a.y) return 1;
  dsc_rt_parallel_for(add_one_body, &a, n, 256);
  return 0;
}

struct scale_args {
  const float* x;
  const float* w;
  float* tmp;
  int64_t d;
};

static void scale_body(void* context, int64_t begin, int64_t end) {
  const struct scale_args* a = (const struct scale_args*)context;
  for (int64_t r = begin; r < end; ++r)
    for (int64_t j = 0; j < a->d; ++j)
      a->tmp[r * a->d + j] = a->x[r * a->d + j] * a->w[j];
}

int32_t tiny_scale_rows(dsc_call* call, const DLTensor* const* inputs) {
  if (dsc_rt_check_input(call, 0, inputs[0], kDLFloat, 32, 2)) return 1;
  if (dsc_rt_check_input(call, 1, inputs[1], kDLFloat, 32, 1)) return 1;
  int64_t b = inputs[0]->shape[0], d = inputs[0]->shape[1];
  if (inputs[1]->shape[0] != d) return dsc_rt_fail_dim(call, 1, 0, inputs[1]->shape[0], d, "D");
  if (!(b <= 64)) {
    const char* names[] = {"B"};
    int64_t values[] = {b};
    return dsc_rt_fail_check(call, "where B <= 64", "tiny.dsc:2:40", 1, names, values);
  }
  /* The outputs in reverse order: the runtime must accept any order. */
  float* s = (float*)dsc_rt_output(call, 1, kDLFloat, 32, 1, &b);
  if (!s) return 1;
  int64_t y_shape[2] = {b, d};
  float* y = (float*)dsc_rt_output(call, 0, kDLFloat, 32, 2, y_shape);
  if (!y) return 1;
  float* tmp = (float*)dsc_rt_arena(call, b * d * 4);
  if (!tmp) return 1;
  struct scale_args a;
  a.x = (const float*)dsc_rt_input_data(inputs[0]);
  a.w = (const float*)dsc_rt_input_data(inputs[1]);
  a.tmp = tmp;
  a.d = d;
  dsc_rt_parallel_for(scale_body, &a, b, 1);
  for (int64_t k = 0; k < b * d; ++k)
    y[k] = tmp[k];
  /* s[B, 1] = x[B, D] @ w[D, 1] */
  dsc_rt_matmul_f32(a.x, a.w, s, 1, b, 1, d, 0, 0, 0);
  return 0;
}

int32_t tiny_forgets_output(dsc_call* call, const DLTensor* const* inputs) {
  return dsc_rt_check_input(call, 0, inputs[0], kDLFloat, 32, 1);
}

int32_t tiny_fails_silently(dsc_call* call, const DLTensor* const* inputs) {
  (void)call;
  (void)inputs;
  return 1;
}
