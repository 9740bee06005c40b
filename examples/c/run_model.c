/* run_model: runs one function of a model built by `dscc build`, through the C API alone.
 *
 *   run_model MODEL.so FUNCTION [SYM=VALUE,...]
 *
 * Each parameter's type comes from the model ("f32[B, S, 768]"); its dims must be integers or
 * symbols given on the command line (B=2,S=7). Every input is filled with deterministic
 * pseudo-random values: floats in [-1, 1), integers in [0, 4), bools 0 or 1. The program
 * prints each input's and each output's type and the sum of its elements, and exits 0; on any
 * failure it prints dsc_last_error() (or what went wrong with the arguments) and exits 1. */
#include <dlpack/dlpack.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/dsc_runtime.h"

enum { kMaxBindings = 64, kMaxDims = 32, kMaxOutputs = 64 };

typedef struct {
  char name[64];
  int64_t value;
} Binding;

typedef struct {
  Binding items[kMaxBindings];
  int count;
} Bindings;

/* A non-negative decimal integer, the whole of [text, text + len). */
static int parse_int(const char* text, size_t len, int64_t* out) {
  int64_t v = 0;
  if (len == 0) return 0;
  for (size_t i = 0; i < len; ++i) {
    if (text[i] < '0' || text[i] > '9') return 0;
    if (v > (INT64_MAX - (text[i] - '0')) / 10) return 0;
    v = v * 10 + (text[i] - '0');
  }
  *out = v;
  return 1;
}

static int is_identifier(const char* text, size_t len) {
  if (len == 0 || (text[0] >= '0' && text[0] <= '9')) return 0;
  for (size_t i = 0; i < len; ++i) {
    char c = text[i];
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return 0;
  }
  return 1;
}

/* "B=2,S=7" */
static int parse_bindings(const char* text, Bindings* out) {
  const char* p = text;
  while (*p) {
    const char* end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char* eq = memchr(p, '=', len);
    Binding* b = &out->items[out->count];
    if (!eq || !is_identifier(p, (size_t)(eq - p)) || (size_t)(eq - p) >= sizeof b->name ||
        !parse_int(eq + 1, len - (size_t)(eq - p) - 1, &b->value)) {
      fprintf(stderr, "run_model: bad binding '%.*s' (expected SYM=VALUE, VALUE >= 0)\n", (int)len,
              p);
      return 0;
    }
    if (out->count == kMaxBindings) {
      fprintf(stderr, "run_model: too many bindings (at most %d)\n", kMaxBindings);
      return 0;
    }
    memcpy(b->name, p, (size_t)(eq - p));
    b->name[eq - p] = '\0';
    out->count++;
    p = end ? end + 1 : p + len;
  }
  return 1;
}

static const Binding* find_binding(const Bindings* bindings, const char* name, size_t len) {
  for (int i = 0; i < bindings->count; ++i)
    if (strlen(bindings->items[i].name) == len && memcmp(bindings->items[i].name, name, len) == 0)
      return &bindings->items[i];
  return NULL;
}

typedef struct {
  const char* name;
  DLDataType type;
} NamedType;

static const NamedType kTypes[] = {
    {"f32", {kDLFloat, 32, 1}},   {"f64", {kDLFloat, 64, 1}}, {"f16", {kDLFloat, 16, 1}},
    {"bf16", {kDLBfloat, 16, 1}}, {"i8", {kDLInt, 8, 1}},     {"i32", {kDLInt, 32, 1}},
    {"i64", {kDLInt, 64, 1}},     {"bool", {kDLUInt, 8, 1}},
};

static const char* type_name(DLDataType t) {
  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; ++i)
    if (kTypes[i].type.code == t.code && kTypes[i].type.bits == t.bits &&
        kTypes[i].type.lanes == t.lanes)
      return kTypes[i].name;
  return "?";
}

/* Resolves "f32[B, S, 768]" with the bindings into a dtype and a shape. */
static int resolve_type(const char* param, const char* type, const Bindings* bindings,
                        DLDataType* dtype, int64_t* shape, int* ndim) {
  const char* open = strchr(type, '[');
  size_t len = open ? (size_t)(open - type) : 0;
  int found = 0;
  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; ++i) {
    if (strlen(kTypes[i].name) == len && strncmp(kTypes[i].name, type, len) == 0) {
      *dtype = kTypes[i].type;
      found = 1;
    }
  }
  if (!found) {
    fprintf(stderr, "run_model: parameter '%s' has type '%s', which this program cannot fill\n",
            param, type);
    return 0;
  }
  *ndim = 0;
  const char* p = open + 1;
  while (*p && *p != ']') {
    while (*p == ' ')
      ++p;
    const char* end = p;
    while (*end && *end != ',' && *end != ']')
      ++end;
    size_t dim_len = (size_t)(end - p);
    while (dim_len > 0 && p[dim_len - 1] == ' ')
      --dim_len;
    if (*ndim == kMaxDims) {
      fprintf(stderr, "run_model: parameter '%s' has more than %d dims\n", param, kMaxDims);
      return 0;
    }
    int64_t value = 0;
    if (parse_int(p, dim_len, &value)) {
      shape[*ndim] = value;
    } else if (is_identifier(p, dim_len)) {
      const Binding* b = find_binding(bindings, p, dim_len);
      if (!b) {
        fprintf(stderr,
                "run_model: parameter '%s' (%s) needs a value for '%.*s'; give %.*s=VALUE\n", param,
                type, (int)dim_len, p, (int)dim_len, p);
        return 0;
      }
      shape[*ndim] = b->value;
    } else {
      fprintf(stderr,
              "run_model: parameter '%s' (%s) has the dim '%.*s', which is neither an integer "
              "nor a symbol\n",
              param, type, (int)dim_len, p);
      return 0;
    }
    ++*ndim;
    p = *end == ',' ? end + 1 : end;
  }
  return 1;
}

/* xorshift64*: the same values on every machine. */
static uint64_t next_random(uint64_t* state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 0x2545F4914F6CDD1DULL;
}

/* k / 1024 for k in [-1024, 1024) is exact in every float type, f16 included. */
static uint16_t f16_of_k(int k) {
  uint16_t sign = k < 0 ? 0x8000 : 0;
  unsigned m = (unsigned)(k < 0 ? -k : k); /* value = m * 2^-10, m <= 1024 */
  if (m == 0) return sign;
  int e = 0;
  while ((m >> (e + 1)) != 0)
    ++e;
  return (uint16_t)(sign | (unsigned)(e + 5) << 10 | ((m << (10 - e)) & 0x3ffu));
}

static double f16_value(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  double v = exponent == 0    ? ldexp(mantissa, -24)
             : exponent == 31 ? (mantissa ? NAN : INFINITY)
                              : ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) ? -v : v;
}

static double bf16_value(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static size_t element_bytes(DLDataType t) {
  return (size_t)(t.bits * t.lanes + 7) / 8;
}

/* Element i of a buffer of type t, as a double. */
static double element(const void* data, DLDataType t, int64_t i) {
  const char* p = (const char*)data + (size_t)i * element_bytes(t);
  union {
    float f32;
    double f64;
    uint16_t u16;
    int8_t i8;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
  } v;
  memcpy(&v, p, element_bytes(t));
  if (t.code == kDLFloat && t.bits == 32) return v.f32;
  if (t.code == kDLFloat && t.bits == 64) return v.f64;
  if (t.code == kDLFloat && t.bits == 16) return f16_value(v.u16);
  if (t.code == kDLBfloat) return bf16_value(v.u16);
  if (t.code == kDLInt && t.bits == 8) return v.i8;
  if (t.code == kDLInt && t.bits == 32) return v.i32;
  if (t.code == kDLInt && t.bits == 64) return (double)v.i64;
  if (t.code == kDLUInt && t.bits == 8) return v.u8;
  return 0.0;
}

/* Fills element i with the next pseudo-random value. */
static void fill(void* data, DLDataType t, int64_t i, uint64_t* state) {
  char* p = (char*)data + (size_t)i * element_bytes(t);
  uint64_t r = next_random(state);
  int k = (int)(r >> 53) - 1024; /* [-1024, 1024) */
  float f = (float)k / 1024.0f;
  double d = (double)k / 1024.0;
  uint32_t f_bits;
  memcpy(&f_bits, &f, sizeof f_bits);
  uint16_t h = t.code == kDLBfloat ? (uint16_t)(f_bits >> 16) : f16_of_k(k); /* both exact */
  int8_t i8 = (int8_t)(r >> 62);
  int32_t i32 = (int32_t)(r >> 62);
  int64_t i64 = (int64_t)(r >> 62);
  uint8_t b = (uint8_t)(r >> 63);
  if (t.code == kDLFloat && t.bits == 32)
    memcpy(p, &f, 4);
  else if (t.code == kDLFloat && t.bits == 64)
    memcpy(p, &d, 8);
  else if (t.code == kDLFloat || t.code == kDLBfloat)
    memcpy(p, &h, 2);
  else if (t.code == kDLInt && t.bits == 8)
    memcpy(p, &i8, 1);
  else if (t.code == kDLInt && t.bits == 32)
    memcpy(p, &i32, 4);
  else if (t.code == kDLInt && t.bits == 64)
    memcpy(p, &i64, 8);
  else
    memcpy(p, &b, 1);
}

static int64_t numel(const int64_t* shape, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i)
    n *= shape[i];
  return n;
}

static void print_tensor(const char* label, const DLTensor* t) {
  double sum = 0.0;
  int64_t n = numel(t->shape, t->ndim);
  const char* data = (const char*)t->data + t->byte_offset;
  for (int64_t i = 0; i < n; ++i)
    sum += element(data, t->dtype, i);
  printf("%s: %s[", label, type_name(t->dtype));
  for (int i = 0; i < t->ndim; ++i)
    printf("%s%lld", i ? ", " : "", (long long)t->shape[i]);
  printf("] sum %.6f\n", sum);
}

typedef struct {
  DLTensor tensor;
  int64_t shape[kMaxDims];
} Input;

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: run_model MODEL.so FUNCTION [SYM=VALUE,...]\n");
    return 1;
  }
  const char* path = argv[1];
  const char* function = argv[2];
  Bindings bindings;
  bindings.count = 0;
  if (argc == 4 && !parse_bindings(argv[3], &bindings)) return 1;

  int status = 1;
  int num_params = -1, num_outputs = 0, ready = 0;
  Input* inputs = NULL;
  const DLTensor** arguments = NULL;
  DLManagedTensor* outputs[kMaxOutputs];
  dsc_model* model = dsc_model_load(path);
  if (!model) {
    fprintf(stderr, "run_model: %s\n", dsc_last_error());
    return 1;
  }
  num_params = dsc_model_num_params(model, function);
  if (num_params < 0) {
    fprintf(stderr, "run_model: %s; the model's functions are:", dsc_last_error());
    for (int f = 0; f < dsc_model_num_functions(model); ++f)
      fprintf(stderr, " %s", dsc_model_function_name(model, f));
    fprintf(stderr, "\n");
    goto done;
  }
  inputs = calloc((size_t)num_params + 1, sizeof *inputs);
  arguments = calloc((size_t)num_params + 1, sizeof *arguments);
  if (!inputs || !arguments) {
    fprintf(stderr, "run_model: out of memory\n");
    goto done;
  }
  for (; ready < num_params; ++ready) {
    Input* in = &inputs[ready];
    const char* name = dsc_model_param_name(model, function, ready);
    const char* type = dsc_model_param_type(model, function, ready);
    int ndim = 0;
    if (!resolve_type(name, type, &bindings, &in->tensor.dtype, in->shape, &ndim)) goto done;
    int64_t n = numel(in->shape, ndim);
    size_t bytes = n < (int64_t)(SIZE_MAX / 16) ? (size_t)n * element_bytes(in->tensor.dtype) : 0;
    if (n >= (int64_t)(SIZE_MAX / 16) || !(in->tensor.data = malloc(bytes ? bytes : 1))) {
      fprintf(stderr, "run_model: cannot allocate parameter '%s' (%s)\n", name, type);
      goto done;
    }
    in->tensor.device.device_type = kDLCPU;
    in->tensor.device.device_id = 0;
    in->tensor.ndim = ndim;
    in->tensor.shape = in->shape;
    in->tensor.strides = NULL; /* dense row-major */
    in->tensor.byte_offset = 0;
    uint64_t state = 0x9E3779B97F4A7C15ULL * (uint64_t)(ready + 1);
    for (int64_t i = 0; i < n; ++i)
      fill(in->tensor.data, in->tensor.dtype, i, &state);
    arguments[ready] = &in->tensor;
    char label[96];
    snprintf(label, sizeof label, "input %s", name);
    print_tensor(label, &in->tensor);
  }
  if (dsc_model_run(model, function, arguments, num_params, outputs, kMaxOutputs, &num_outputs) !=
      0) {
    fprintf(stderr, "run_model: %s\n", dsc_last_error());
    goto done;
  }
  for (int i = 0; i < num_outputs; ++i) {
    char label[32];
    snprintf(label, sizeof label, "output %d", i);
    print_tensor(label, &outputs[i]->dl_tensor);
    outputs[i]->deleter(outputs[i]);
  }
  status = 0;
done:
  for (int i = 0; inputs && i < num_params; ++i)
    free(inputs[i].tensor.data);
  free(inputs);
  free(arguments);
  dsc_model_free(model);
  return status;
}
