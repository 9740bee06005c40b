#include "ir/LibraryRoutine.h"

#include <algorithm>
#include <iterator>

#include "ir/HostProgram.h"
#include "ir/Module.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"
#include "support/Assert.h"
#include "support/WordList.h"
#include "symbolic/Simplify.h"

namespace dsc::ir {

namespace {

using symbolic::Expr;

Expr product(const std::vector<Expr>& dims, size_t begin, size_t end) {
  Expr p = 1;
  for (size_t i = begin; i < end; ++i) p = p * dims[i];
  return symbolic::simplify(p);
}

bool same(const Expr& a, const Expr& b) {
  return symbolic::compare(symbolic::simplify(a), symbolic::simplify(b)) == 0;
}

// Whether the rows of `v` (its last two dims a matrix) follow on across its batch dims, as the
// rows of one matrix of (product of the dims but the last) rows: each batch dim's stride is
// the rows' stride times the rows before it (a dim of extent 1 steps nowhere).
bool rows_follow_on(const StridedView& v) {
  const size_t r = v.shape.size();
  Expr step = v.strides[r - 2];
  for (size_t d = r - 2; d-- > 0;) {
    step = step * v.shape[d + 1];
    if (!same(v.strides[d], step) && !same(v.shape[d], 1)) return false;
  }
  return true;
}

// dsc.sgemm, C = A @ B with A, B and C accessed through strides (dsc_rt_gemm_f32_strided); C's
// rows are contiguous. A's batch dims fold into m when B has none and the rows of A and C both
// follow on across them; otherwise the batch is C's, each operand with C's batch dims or none
// (stride 0), and batch dims merge while A, B and C all step through them as through one dim,
// to at most two.
std::optional<std::vector<Expr>> strided_sgemm_scalar_args(const std::vector<StridedView>& buffers,
                                                           const std::vector<RoutineAttribute>&,
                                                           std::string* error) {
  const StridedView& a = buffers[0];
  const StridedView& b = buffers[1];
  const StridedView& c = buffers[2];
  const size_t ar = a.shape.size(), br = b.shape.size(), cr = c.shape.size();
  if (ar < 2 || br < 2 || cr < 2) {
    *error = "the GEMM needs rank >= 2 operands";
    return std::nullopt;
  }
  if (!same(c.strides[cr - 1], 1)) {
    *error = "the GEMM writes each row of its result contiguously";
    return std::nullopt;
  }
  Expr m = a.shape[ar - 2], k = a.shape[ar - 1], n = b.shape[br - 1];
  const Expr a_row = a.strides[ar - 2], a_col = a.strides[ar - 1];
  const Expr b_row = b.strides[br - 2], b_col = b.strides[br - 1];
  const Expr c_row = c.strides[cr - 2];
  // The batch dims: extent, A's stride, B's stride, C's stride.
  struct Dim {
    Expr extent, a, b, c;
  };
  std::vector<Dim> dims;
  const bool folded = br == 2 && ar == cr && rows_follow_on(a) && rows_follow_on(c);
  if (folded) m = product(a.shape, 0, ar - 1);
  if (!folded) {
    const size_t batch_rank = cr - 2;
    if ((ar != 2 && ar != cr) || (br != 2 && br != cr)) {
      *error = "GEMM operands with batch dims of different ranks";
      return std::nullopt;
    }
    for (size_t d = 0; d < batch_rank; ++d) {
      if (same(c.shape[d], 1)) continue; // steps nowhere
      dims.push_back({c.shape[d], ar == 2 ? Expr(0) : a.strides[d],
                      br == 2 ? Expr(0) : b.strides[d], c.strides[d]});
    }
    // Merge a dim into the one before it when the operands and the result step through the
    // pair as one.
    std::vector<Dim> merged;
    for (const Dim& d : dims) {
      if (!merged.empty()) {
        Dim& outer = merged.back();
        if (same(outer.a, d.a * d.extent) && same(outer.b, d.b * d.extent) &&
            same(outer.c, d.c * d.extent)) {
          outer = {symbolic::simplify(outer.extent * d.extent), d.a, d.b, d.c};
          continue;
        }
      }
      merged.push_back(d);
    }
    dims = std::move(merged);
    if (dims.size() > 2) {
      *error = "the GEMM's operands step through more than two batch dims that do not merge";
      return std::nullopt;
    }
  }
  Expr batch = 1, inner = 1;
  Expr a_outer = 0, a_inner = 0, b_outer = 0, b_inner = 0, c_outer = 0, c_inner = 0;
  if (!dims.empty()) {
    batch = dims[0].extent;
    a_outer = dims[0].a;
    b_outer = dims[0].b;
    c_outer = dims[0].c;
  }
  if (dims.size() == 2) {
    batch = symbolic::simplify(batch * dims[1].extent);
    inner = dims[1].extent;
    a_inner = dims[1].a;
    b_inner = dims[1].b;
    c_inner = dims[1].c;
  }
  auto s = [](const Expr& e) { return symbolic::simplify(e); };
  return std::vector<Expr>{s(batch),    s(inner),   s(m),       n,          k,
                           s(a.offset), s(a_outer), s(a_inner), s(a_row),   s(a_col),
                           s(b.offset), s(b_outer), s(b_inner), s(b_row),   s(b_col),
                           s(c.offset), s(c_outer), s(c_inner), s(c_row)};
}

// blas.sgemm and cublas.sgemm through strides: dsc.sgemm's scalars, each operand a matrix the
// BLAS library reads as itself or transposed (one of its two strides 1).
std::optional<std::vector<Expr>>
blas_strided_sgemm_scalar_args(const std::vector<StridedView>& buffers,
                               const std::vector<RoutineAttribute>& attributes,
                               std::string* error) {
  std::optional<std::vector<Expr>> s = strided_sgemm_scalar_args(buffers, attributes, error);
  if (!s) return std::nullopt;
  for (auto [row, col] : {std::pair<size_t, size_t>{kARow, kACol}, {kBRow, kBCol}})
    if (!same((*s)[row], 1) && !same((*s)[col], 1)) {
      *error = "BLAS reads an operand as a matrix or its transpose, with one of its two "
               "strides 1";
      return std::nullopt;
    }
  return s;
}

// dsc.sgemm_chain, C = epilogue(A @ B) @ D: the first product's result (P, dense, never stored
// whole) is the second's A, so both take dsc.sgemm's scalars, which must agree on the batch
// and the rows; the chain's are the first product's (batch, inner, m, n, k, then A's and B's
// five), then the second's n and D's five, then C's four.
std::optional<std::vector<Expr>> sgemm_chain_scalar_args(const std::vector<StridedView>& buffers,
                                                         const std::vector<RoutineAttribute>&,
                                                         std::string* error) {
  const StridedView& a = buffers[0];
  const StridedView& b = buffers[1];
  const StridedView& d = buffers[2];
  const StridedView& c = buffers[3];
  if (a.shape.size() < 2 || b.shape.size() < 2) {
    *error = "the GEMM needs rank >= 2 operands";
    return std::nullopt;
  }
  std::vector<Expr> p_shape(a.shape.begin(), a.shape.end() - 1);
  p_shape.push_back(b.shape.back());
  const StridedView p = dense_view(p_shape);
  std::optional<std::vector<Expr>> first = strided_sgemm_scalar_args({a, b, p}, {}, error);
  if (!first) return std::nullopt;
  std::optional<std::vector<Expr>> second = strided_sgemm_scalar_args({p, d, c}, {}, error);
  if (!second) return std::nullopt;
  // Where one product's batch dims merged into one and the other's did not, the merged one
  // steps through the other's two (product i at i times its stride either way).
  std::vector<Expr>& s1 = *first;
  std::vector<Expr>& s2 = *second;
  auto split_batch = [](std::vector<Expr>& s, const Expr& inner) {
    for (size_t outer : {kAOuter, kBOuter, kCOuter}) {
      s[outer + 1] = s[outer]; // the inner stride follows the outer one
      s[outer] = symbolic::simplify(s[outer] * inner);
    }
    s[kInner] = inner;
  };
  if (same(s1[kBatch], s2[kBatch]) && !same(s1[kInner], s2[kInner])) {
    if (same(s2[kInner], 1))
      split_batch(s2, s1[kInner]);
    else if (same(s1[kInner], 1))
      split_batch(s1, s2[kInner]);
  }
  // Batch, inner, m alike; the second's depth the first's n; its A the first's C (dense, the
  // columns at stride 1).
  bool agree = same(s2[kK], s1[kN]) && same(s2[kACol], 1);
  for (size_t i : {kBatch, kInner, kM}) agree = agree && same(s1[i], s2[i]);
  for (size_t i = 0; i < 4; ++i) agree = agree && same(s1[kCOffset + i], s2[kAOffset + i]);
  if (!agree) {
    *error = "the chained products step through their batch or rows differently";
    return std::nullopt;
  }
  std::vector<Expr> out(s1.begin(), s1.begin() + kCOffset); // up to B's
  out.push_back(s2[kN]);
  out.insert(out.end(), s2.begin() + kBOffset, s2.end()); // D's (the second's B) and C's
  return out;
}

// Whether `v` is its shape's dense row-major layout.
bool is_dense(const StridedView& v) {
  const StridedView dense = dense_view(v.shape);
  bool same_layout = same(v.offset, 0);
  for (size_t d = 0; d < v.shape.size(); ++d)
    same_layout = same_layout && (same(v.shape[d], 1) || same(v.strides[d], dense.strides[d]));
  return same_layout;
}

// cublaslt.sgemm_*: cublas.sgemm's scalars from A, B and C; the bias, the third buffer, is
// dense and holds one value per column of C (its last dim C's, any other 1).
std::optional<std::vector<Expr>>
lt_sgemm_scalar_args(const std::vector<StridedView>& buffers,
                     const std::vector<RoutineAttribute>& attributes, std::string* error) {
  const StridedView& bias = buffers[2];
  const StridedView& c = buffers[3];
  bool per_column =
      !bias.shape.empty() && !c.shape.empty() && same(bias.shape.back(), c.shape.back());
  for (size_t d = 0; per_column && d + 1 < bias.shape.size(); ++d)
    per_column = same(bias.shape[d], 1);
  if (!per_column || !is_dense(bias)) {
    *error = "cuBLASLt's bias is a dense vector of one value per column of the result";
    return std::nullopt;
  }
  return blas_strided_sgemm_scalar_args({buffers[0], buffers[1], c}, attributes, error);
}

// cudnn.conv2d: NCHW input, OIHW weights and NCHW result, each dense (cuDNN's packed NCHW),
// and the attributes stride, padding, dilation (each [h, w]) and groups ([g]). Whether the
// sizes agree (C = groups * the weights' in-channels, the result's height and width those of
// the window) is the op's typing's, and the runtime checks it again before calling cuDNN.
std::optional<std::vector<Expr>> conv2d_scalar_args(const std::vector<StridedView>& buffers,
                                                    const std::vector<RoutineAttribute>& attributes,
                                                    std::string* error) {
  for (const StridedView& v : buffers) {
    if (v.shape.size() != 4) {
      *error = "the convolution's input, weights and result are rank-4 (NCHW, OIHW, NCHW)";
      return std::nullopt;
    }
    if (!is_dense(v)) {
      *error = "cuDNN reads and writes dense NCHW tensors";
      return std::nullopt;
    }
  }
  // name, how many values, the least value.
  const struct {
    const char* name;
    size_t count;
    int64_t least;
  } wanted[] = {{"stride", 2, 1}, {"padding", 2, 0}, {"dilation", 2, 1}, {"groups", 1, 1}};
  if (attributes.size() != std::size(wanted)) {
    *error = "the convolution takes the attributes stride, padding, dilation and groups";
    return std::nullopt;
  }
  std::vector<int64_t> values;
  for (size_t i = 0; i < std::size(wanted); ++i) {
    const RoutineAttribute& a = attributes[i];
    if (a.name != wanted[i].name || a.values.size() != wanted[i].count) {
      *error = std::string("attribute ") + std::to_string(i + 1) + " of the convolution is " +
               wanted[i].name + " = [" + (wanted[i].count == 2 ? "h, w" : "g") + "]";
      return std::nullopt;
    }
    for (int64_t v : a.values) {
      if (v < wanted[i].least) {
        *error = std::string("the convolution's ") + wanted[i].name + " must be at least " +
                 std::to_string(wanted[i].least) + ", not " + std::to_string(v);
        return std::nullopt;
      }
      values.push_back(v);
    }
  }
  const StridedView &x = buffers[0], &w = buffers[1], &y = buffers[2];
  // The weights hold C / groups input channels: each group's product reads them all.
  if (!same(symbolic::simplify(w.shape[1] * Expr(values[6])), x.shape[1])) {
    *error = "the convolution's input has " + symbolic::to_string(x.shape[1]) +
             " channels, not groups (" + std::to_string(values[6]) + ") times the weights' " +
             symbolic::to_string(w.shape[1]);
    return std::nullopt;
  }
  // values: stride h, w, padding h, w, dilation h, w, groups.
  return std::vector<Expr>{x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.shape[0], w.shape[2],
                           w.shape[3], y.shape[2], y.shape[3], values[6],  values[0],  values[1],
                           values[2],  values[3],  values[4],  values[5]};
}

// dsc.gemm_q8 and dsc.gemm_q4: x [..., K] (its leading dims folded into M), w [N, K or K / 2],
// scales [N, G], the result [..., N], all dense.
std::optional<std::vector<Expr>>
quantized_gemm_scalar_args(const std::vector<StridedView>& buffers,
                           const std::vector<RoutineAttribute>&, std::string* error) {
  const StridedView &x = buffers[0], &w = buffers[1], &scales = buffers[2];
  for (const StridedView& v : buffers)
    if (!is_dense(v)) {
      *error = "a quantized product reads and writes dense tensors";
      return std::nullopt;
    }
  if (x.shape.empty() || w.shape.size() != 2 || scales.shape.size() != 2) {
    *error = "a quantized product takes x [..., K], w [N, K or K / 2] and scales [N, G]";
    return std::nullopt;
  }
  const std::vector<Expr> rows(x.shape.begin(), x.shape.end() - 1);
  Expr m(1);
  for (const Expr& d : rows) m = m * d;
  return std::vector<Expr>{symbolic::simplify(m), w.shape[0], x.shape.back(), scales.shape[1]};
}

} // namespace

static_assert(kSgemmScalars == 19 && kSgemmChainScalars == 25 && kConv2dScalars == 16,
              "the GEMM scalar tables (LibraryRoutine.h) match ir/LibraryRoutines.def");

const std::vector<LibraryRoutine>& all_library_routines() {
  static const std::vector<LibraryRoutine> routines = {
#define DSC_LIBRARY_ROUTINE(id, symbol, target, role, base, preferred, runtime_function,           \
                            epilogue_function, views, buffers, scalars, scalars_by, dtype,         \
                            buffer_dtypes, scalar_args, attributes, summary)                       \
  {RoutineId::id,    symbol,  TargetKind::target, RoutineRole::role, RoutineId::base,              \
   preferred,        runtime_function, epilogue_function, views,    buffers,                       \
   scalars,          ScalarsBy::scalars_by, DType::dtype, buffer_dtypes, scalar_args, attributes,   \
   summary},
#include "ir/LibraryRoutines.def"
  };
  return routines;
}

DType routine_buffer_dtype(const LibraryRoutine& routine, size_t i) {
  if (!*routine.buffer_dtypes) return routine.dtype;
  std::string_view names = routine.buffer_dtypes;
  for (size_t k = 0; k < i; ++k) names.remove_prefix(names.find(' ') + 1);
  std::optional<DType> d = parse_dtype(names.substr(0, names.find(' ')));
  internal_assert(d) << "routine " << routine.symbol << ": bad buffer_dtypes";
  return *d;
}

const LibraryRoutine& library_routine(RoutineId id) {
  internal_assert(id != RoutineId::None) << "library_routine(RoutineId::None)";
  // The table's rows are in RoutineId order: the enum is made from the same table.
  return all_library_routines()[static_cast<size_t>(id)];
}

const LibraryRoutine* extending_routine(RoutineId base, RoutineRole role, TargetKind target) {
  for (const LibraryRoutine& r : all_library_routines())
    if (r.base == base && r.role == role && r.target == target) return &r;
  return nullptr;
}

std::string_view routine_provider(const LibraryRoutine& routine) {
  std::string_view symbol = routine.symbol;
  return symbol.substr(0, symbol.find('.'));
}

std::string epilogue_rows_symbol(const PrimFunc& epilogue) {
  if (epilogue.outputs.size() != 1 || epilogue.outputs[0].shape.size() != 2) return "";
  const symbolic::Sym* rows = epilogue.outputs[0].shape[0].as<symbolic::Sym>();
  return rows ? rows->name : "";
}

std::string epilogue_mismatch(const ExternFunc& ext, const PrimFunc& prim) {
  const LibraryRoutine* routine = find_library_routine(ext.symbol);
  if (!routine || !routine->epilogue_function)
    return "routine \"" + ext.symbol + "\" takes no epilogue";
  const size_t operands = static_cast<size_t>(routine->operands());
  const size_t passed = ext.params.size() < operands ? 0 : ext.params.size() - operands;
  if (prim.inputs.size() != passed)
    return "the epilogue takes " + std::to_string(prim.inputs.size()) +
           " inputs; the extern passes it its parameters after the operands (" +
           std::to_string(passed) + ")";
  if (prim.outputs.size() != 1 || prim.outputs[0].shape.size() != 2 ||
      prim.outputs[0].dtype != routine->dtype)
    return std::string("the epilogue's one output is the result as a ") +
           dtype_name(routine->dtype) + " matrix [R, N]";
  const std::string rows = epilogue_rows_symbol(prim);
  if (rows.empty())
    return "the first dim of the epilogue's output, its row count, must be a symbol, not " +
           symbolic::to_string(prim.outputs[0].shape[0]);
  auto mentions_rows = [&](const symbolic::Expr& d) {
    for (const std::string& s : symbolic::free_symbols(d))
      if (s == rows) return true;
    return false;
  };
  if (mentions_rows(prim.outputs[0].shape[1]))
    return "the row count " + rows + " appears in the output's second dim";
  for (size_t k = 0; k < prim.inputs.size(); ++k) {
    const Buffer& in = prim.inputs[k];
    if (in.dtype != ext.params[k + operands]->type.dtype)
      return "epilogue input '" + in.name + "' is " + dtype_name(in.dtype) + ", but '" +
             ext.params[k + operands]->name + "' is " +
             dtype_name(ext.params[k + operands]->type.dtype);
    for (size_t a = 0; a < in.shape.size(); ++a)
      if ((a > 0 || !in.shape[a].same_as(prim.outputs[0].shape[0])) && mentions_rows(in.shape[a]))
        return "epilogue input '" + in.name + "' uses the row count " + rows +
               " other than as its first dim";
  }
  if (const std::string& first = ext.epilogue_first_row; !first.empty()) {
    const std::vector<std::string> symbols = prim_signature_symbols(prim);
    if (first == rows || std::find(symbols.begin(), symbols.end(), first) == symbols.end())
      return "its first row '" + first + "' is not a symbol of the epilogue other than its row "
             "count (declare it in the prim's where clause)";
    for (const std::vector<Buffer>* buffers : {&prim.inputs, &prim.outputs})
      for (const Buffer& b : *buffers)
        for (const symbolic::Expr& d : b.shape)
          for (const std::string& s : symbolic::free_symbols(d))
            if (s == first)
              return "its first row '" + first + "' appears in a dim of '" + b.name + "'";
  }
  if (prim.inputs.size() + 1 > kMaxEpilogueBuffers)
    return "the epilogue has " + std::to_string(prim.inputs.size() + 1) +
           " buffers; at most " + std::to_string(kMaxEpilogueBuffers);
  if (prim_signature_symbols(prim).size() > kMaxEpilogueSymbols)
    return "the epilogue takes more than " + std::to_string(kMaxEpilogueSymbols) + " symbols";
  return "";
}

std::vector<std::string> routine_attribute_names(const LibraryRoutine& routine) {
  std::vector<std::string> names;
  std::string_view rest = routine.attributes;
  while (!rest.empty()) {
    const size_t space = rest.find(' ');
    if (space != 0) names.emplace_back(rest.substr(0, space));
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  return names;
}

std::string routine_attributes_wanted(const std::vector<std::string>& names) {
  if (names.empty()) return "no attributes";
  return (names.size() == 1 ? "the attribute " : "the attributes ") + word_list(names);
}

const LibraryRoutine* find_library_routine(std::string_view symbol) {
  for (const LibraryRoutine& r : all_library_routines())
    if (symbol == r.symbol) return &r;
  return nullptr;
}

} // namespace dsc::ir
