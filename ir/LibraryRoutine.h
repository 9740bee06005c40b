#pragma once
// Library routines (ir/LibraryRoutines.def): what an `extern fn ... = "symbol"` binds, who
// offers it, and how the host program calls it. Adding a routine is one line in the .def, its
// scalar-argument function here, and its runtime function.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/RoutineAttribute.h"
#include "ir/StridedView.h"
#include "ir/Target.h"
#include "ir/Type.h"
#include "symbolic/Expr.h"

namespace dsc::ir {

// The scalar arguments of one call, from how it reads its operands and results (in the
// routine's buffer order: each buffer's shape, or its strided view) and the extern's
// attributes; nullopt with `*error` set when they are not ones the routine takes.
using ScalarArgsFn = std::optional<std::vector<symbolic::Expr>> (*)(
    const std::vector<StridedView>& buffers, const std::vector<RoutineAttribute>& attributes,
    std::string* error);

// A routine's name in code: one per row of the table.
enum class RoutineId : uint8_t {
#define DSC_LIBRARY_ROUTINE(id, ...) id,
#include "ir/LibraryRoutines.def"
  None, // no routine (a `base` column's "none")
};

// What a routine computes; legalize and fusion ask for a routine by role (and base).
enum class RoutineRole : uint8_t {
  Matmul,             // C = A @ B, batched
  MatmulChain,        // C = epilogue(A @ B) @ D, a block of rows at a time
  MatmulBias,         // C = A @ B + bias (a value per column), finished by the vendor
  MatmulBiasRelu,     // max(A @ B + bias, 0), the vendor's ReLU (NaN becomes 0)
  MatmulBiasGeluTanh, // gelu_tanh(A @ B + bias), finished by the vendor
  Conv2d,             // a 2-D convolution, NCHW by OIHW
  MatmulQ8,           // matmul_q at 8 bits: x times w dequantized (ir/ops/Matmul.cpp)
  MatmulQ4,           // matmul_q at 4 bits
};

// How the host code passes a routine's scalars (its table's `scalars_by`).
enum class ScalarsBy : uint8_t {
  Values,     // one int64 argument each, after the buffers
  Descriptor, // one pointer, after the buffers, to an array of them: a runtime/HostABI.h struct
};

struct LibraryRoutine {
  RoutineId id;
  const char* symbol;           // "blas.sgemm": its spelling in .dsc text, nothing else
  TargetKind target;            // the target kind that offers it
  RoutineRole role;             // what it computes
  RoutineId base;               // the routine whose products it extends, or None
  bool preferred;               // legalize's choice for its role on its target
  const char* runtime_function; // the runtime entry point the host code calls
  const char* epilogue_function; // the entry point of a call with an epilogue, or null
  bool views;                   // reads operands through strides (ir/StridedView.h)
  int buffers;                  // operands then results
  int scalars;                  // int64 scalars after the buffers
  ScalarsBy scalars_by;         // passed one by one, or as a descriptor
  DType dtype;                  // of every buffer, unless buffer_dtypes says
  const char* buffer_dtypes;    // "" or each buffer's dtype, space-separated ("f32 i8 f16 f32")
  ScalarArgsFn scalar_args;
  const char* attributes;       // the attributes it takes, in order, space-separated ("" for none)
  const char* summary;

  // The buffers before the result: the operands (an epilogue's inputs follow them).
  int operands() const { return buffers - 1; }
  // An epilogue runs on A @ B, the product of the first two operands: the result itself for
  // a routine of two operands, else a product the routine goes on from (dsc.sgemm_chain's
  // first), which is dense whatever view the result is written through.
  bool epilogue_on_result() const { return operands() == 2; }
};

// cudnn.conv2d's scalars (runtime/HostABI.h, dsc_rt_cudnn_conv2d_f32): the input's N, C, H, W,
// the weights' out-channels and window, the result's height and width, then the attributes:
// groups, stride, padding and dilation, each (h, w) but groups.
enum Conv2dScalar : size_t {
  kConvN, kConvC, kConvH, kConvW, kConvO, kConvKH, kConvKW, kConvOH, kConvOW,
  kConvGroups, kConvStrideH, kConvStrideW, kConvPadH, kConvPadW, kConvDilationH, kConvDilationW,
  kConv2dScalars
};

// A routine's attribute names, in order (its table's `attributes`).
std::vector<std::string> routine_attribute_names(const LibraryRoutine& routine);
// "the attributes stride, padding, dilation and groups", "no attributes": for diagnostics.
std::string routine_attributes_wanted(const std::vector<std::string>& names);

// An epilogue (`extern fn ... = "symbol" epilogue PRIM`, for a routine with an
// epilogue_function) is a prim over a block of rows of the routine's result, which the routine
// calls once per block, in place, as soon as the block is final:
//   - its inputs are the extern's parameters after the first two (the operands), with their
//     dtypes, viewed as the prim declares them;
//   - its one output is the result, viewed as a matrix [R, N] whose first dim is a plain symbol
//     R, the block's row count (the routine passes it);
//   - an input is indexed by row when its first dim is R (the routine offsets it to the block),
//     else it is read whole (a bias over the columns); R appears in no other dim;
//   - with `first_row R0` after the epilogue, R0 (a symbol of the prim's where clause, in no
//     dim) receives each block's first row, counted over all the result's rows: an input read
//     whole may then be indexed by the row's position in the result (a mask indexed by the
//     batch of a batch of products, R0 + row divided by the rows per batch);
//   - at most kMaxEpilogueBuffers buffers and kMaxEpilogueSymbols symbols (the runtime's
//     limits, runtime/HostABI.h).
// The prim reads the result where it writes it (the routine's values, then its own).
constexpr size_t kMaxEpilogueBuffers = 16;
constexpr size_t kMaxEpilogueSymbols = 64;

// Where each scalar of the strided products (dsc.sgemm, blas.sgemm, cublas.sgemm, the
// cublaslt.sgemm_* routines) stands, which is the field order of runtime/HostABI.h's
// dsc_strided_product: the batch, its inner dim and the sizes, then A's, B's and C's offset,
// outer and inner batch strides, row stride, column stride (C has none: its rows are
// contiguous).
enum SgemmScalar : size_t {
  kBatch, kInner, kM, kN, kK,
  kAOffset, kAOuter, kAInner, kARow, kACol,
  kBOffset, kBOuter, kBInner, kBRow, kBCol,
  kCOffset, kCOuter, kCInner, kCRow,
  kSgemmScalars
};
// dsc.sgemm_chain's (C = epilogue(A @ B) @ D), dsc_strided_chain's fields: the first product's
// up to B's, then the second's column count, D's five and C's four.
enum SgemmChainScalar : size_t {
  kChainN2 = kCOffset,
  kChainDOffset, kChainDOuter, kChainDInner, kChainDRow, kChainDCol,
  kChainCOffset, kChainCOuter, kChainCInner, kChainCRow,
  kSgemmChainScalars
};

struct ExternFunc;
struct PrimFunc;

// Why `prim` cannot be `ext`'s epilogue, or empty when it can.
std::string epilogue_mismatch(const ExternFunc& ext, const PrimFunc& prim);

// The row-count symbol R of an epilogue (the first dim of its output).
std::string epilogue_rows_symbol(const PrimFunc& epilogue);

// The dtype of the routine's buffer i (operands, then results).
DType routine_buffer_dtype(const LibraryRoutine& routine, size_t i);

// The routine bound to `symbol`, or null.
const LibraryRoutine* find_library_routine(std::string_view symbol);
const LibraryRoutine& library_routine(RoutineId id);
const std::vector<LibraryRoutine>& all_library_routines();
// The routine of `role` that extends `base`'s products on `target` (dsc.sgemm_chain for
// dsc.sgemm's MatmulChain), or null.
const LibraryRoutine* extending_routine(RoutineId base, RoutineRole role, TargetKind target);
// The part of a routine's symbol before the dot: "dsc", "blas", "cublas" (`--gemm=` names it).
std::string_view routine_provider(const LibraryRoutine& routine);

} // namespace dsc::ir
