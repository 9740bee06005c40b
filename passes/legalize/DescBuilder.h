#pragma once
// Builds the compute description of one op call (passes/legalize/ComputeDesc.h): its input and
// output buffers (named after the op's parameters, typed in the fn's own symbols), index
// spaces and locals with fresh names that cannot clash with those symbols, and reads that
// convert between a buffer's dtype and the dtype the op computes in.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Module.h"
#include "passes/legalize/ComputeDesc.h"
#include "passes/legalize/Context.h"
#include "passes/legalize/Scalar.h"

namespace dsc::passes::lowering {

// An operand as the description sees it: one of its inputs, or an immediate (a literal of the
// graph, embedded in the code).
struct Operand {
  std::string buffer;                // empty for an immediate
  ir::DType dtype = ir::DType::F32;  // the buffer's dtype; an immediate's nominal one
  std::vector<symbolic::Expr> shape; // rank 0 for an immediate
  LiteralValue value;                // an immediate's value
  bool immediate() const { return buffer.empty(); }
  size_t rank() const { return shape.size(); }
};

class DescBuilder {
public:
  using Indices = std::vector<symbolic::Expr>;

  DescBuilder(FnContext& ctx, std::string_view op);

  FnContext& context() { return ctx_; }

  // An argument of the op: a Literal becomes an immediate, a Var a new input (the same Var
  // twice gives the same input).
  Operand input(const ir::Expr& arg, std::string_view hint);
  Operand output(const ir::Type& type, std::string_view hint);

  // Fresh variables over `extents` (hint0, hint1, ...; none for a dim of extent 1).
  IndexSpace space(const std::vector<symbolic::Expr>& extents, std::string_view hint = "i");
  std::string local_name(std::string_view hint);

  // The element of `x` at `idx` as an op whose operands share `op_dtype` sees it, in
  // compute_dtype(op_dtype). An immediate ignores `idx`.
  ir::PrimExpr read(const Operand& x, const Indices& idx, ir::DType op_dtype);
  // The raw element (the buffer's dtype).
  ir::PrimExpr load(const Operand& x, const Indices& idx);
  // Adds `let NAME = value` to `e`; returns a reference to it.
  ir::PrimExpr let(Element& e, std::string_view hint, ir::PrimExpr value);

  // The indices of `x` (right-aligned against `out_idx`, NumPy style) for the output element
  // at `out_idx`: a dim of x that is (proved) 1 reads index 0.
  Indices broadcast_indices(const Operand& x, const Indices& out_idx);

  // The description of the call, of result type `type`.
  ComputeDesc map(std::vector<MapOutput> maps, const ir::Type& type);
  ComputeDesc reduce(Reduction reduction, const ir::Type& type);
  // Several reductions per row (argmax: the row's max, then the first index holding it).
  ComputeDesc stitch(Stitch stitch, const ir::Type& type);

private:
  FnContext& ctx_;
  ComputeDesc desc_;
  std::map<const ir::ExprNode*, size_t> input_of_;
};

// The short names the description of every op family is written with.
namespace sym = symbolic;
using ir::BinaryOp;
using ir::DType;
using ir::PrimExpr;
using ir::Stmt;
using Indices = DescBuilder::Indices;

} // namespace dsc::passes::lowering
