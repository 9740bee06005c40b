#pragma once
// Builds one generated prim: its input and output buffers (named after the op's parameters,
// typed in the fn's own symbols), fresh loop variables and locals that cannot clash with those
// symbols, loop nests, and reads and writes that convert between a buffer's dtype and the
// dtype the op computes in. finish() adds the prim to the module and gives the call that
// replaces the op in the fn.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Module.h"
#include "passes/legalize/Context.h"
#include "passes/legalize/Scalar.h"

namespace dsc::passes::lowering {

// An operand as the prim sees it: one of its buffers, or an immediate (a literal of the
// graph, embedded in the code).
struct Operand {
  std::string buffer;                // empty for an immediate
  ir::DType dtype = ir::DType::F32;  // the buffer's dtype; an immediate's nominal one
  std::vector<symbolic::Expr> shape; // rank 0 for an immediate
  LiteralValue value;                // an immediate's value
  bool immediate() const { return buffer.empty(); }
  size_t rank() const { return shape.size(); }
};

// Names unique within one prim, none of them a symbol of the fn or a word of the language.
class NameSet {
public:
  explicit NameSet(const std::set<std::string>& reserved);
  // `hint` itself when free; else hint0, hint1, ... (always numbered with `numbered`).
  std::string fresh(std::string_view hint, bool numbered = false);

private:
  std::set<std::string> taken_;
};

class PrimBuilder {
public:
  using Indices = std::vector<symbolic::Expr>;

  PrimBuilder(FnContext& ctx, std::string_view op);

  FnContext& context() { return ctx_; }

  // An argument of the op: a Literal becomes an immediate, a Var a new input buffer (the same
  // Var twice gives the same buffer).
  Operand input(const ir::Expr& arg, std::string_view hint);
  Operand output(const ir::Type& type, std::string_view hint);

  symbolic::Expr loop_var(std::string_view hint = "i");
  std::string local_name(std::string_view hint);

  // for v0 in 0..extents[0] { for v1 ... { body(v0, v1, ...) } }, outermost first; rank 0
  // gives body({}) alone.
  ir::Stmt loops(const std::vector<symbolic::Expr>& extents,
                 const std::function<ir::Stmt(const Indices&)>& body, std::string_view hint = "i");

  // The element of `x` at `idx` as an op whose operands share `op_dtype` sees it, in
  // compute_dtype(op_dtype). An immediate ignores `idx`.
  ir::PrimExpr read(const Operand& x, const Indices& idx, ir::DType op_dtype);
  // The raw element (the buffer's dtype).
  ir::PrimExpr load(const Operand& x, const Indices& idx);
  // Stores `value` (any dtype; converted to the buffer's) at `idx`.
  ir::Stmt write(const Operand& out, const Indices& idx, ir::PrimExpr value);

  // `let NAME: dtype = value` and a reference to it.
  ir::Stmt let(std::string_view hint, ir::PrimExpr value, ir::PrimExpr* ref);
  // `var NAME: dtype = init`; returns the name.
  ir::Stmt var(std::string_view hint, ir::PrimExpr init, std::string* name);

  // The indices of `x` (right-aligned against `out_shape`, NumPy style) for the output
  // element at `out_idx`: a dim of x that is (proved) 1 reads index 0.
  Indices broadcast_indices(const Operand& x, const Indices& out_idx);

  // Adds the prim (inputs, outputs, body) to the module and returns the call that replaces
  // the op, with the op's result type.
  ir::Expr finish(ir::Stmt body, const ir::Type& type);

private:
  FnContext& ctx_;
  std::string op_;
  NameSet names_;
  std::vector<ir::Buffer> inputs_, outputs_;
  std::vector<ir::Expr> args_;
  std::map<const ir::ExprNode*, size_t> input_of_;
};

// The symbols a statement uses (indices, loop bounds, allocations), less its loop variables.
std::set<std::string> used_symbols(const ir::Stmt& s);

// The short names the lowering of every op family writes prims with.
namespace sym = symbolic;
using ir::BinaryOp;
using ir::DType;
using ir::PrimExpr;
using ir::Stmt;
using Indices = PrimBuilder::Indices;

} // namespace dsc::passes::lowering
