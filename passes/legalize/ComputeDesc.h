#pragma once
// A compute description: what one primitive op call computes, per element, before it becomes
// loops. legalize is two halves: each op family describes its calls (passes/legalize/<Family>.cpp)
// and the materializer (passes/legalize/Materialize.h) turns one description into a prim, an
// extern call or an alias. fuse composes descriptions between the two halves.
//
// It lives in passes/legalize/, not ir/: a description is never printed, parsed, verified or
// kept in a Module; it exists only inside legalize (and fuse, which runs on the same data). Its
// scalar parts are ordinary ir::PrimExpr, so that materializing is only wrapping them in loops.
//
// Conventions of the scalar parts:
//   - Index variables are symbolic::Sym named in the description's NameSet (i0, i1, ... over an
//     output, r0, ... or k0 over reduced axes). A dim of extent 1 has no variable: its index is
//     the constant 0 (so a broadcast read holds an index at 0, a permute permutes variables).
//   - Inputs are operands by number: input k is inputs[k].buffer, and the element reads it with
//     ir::Load(inputs[k].buffer.name, indices). A fusion pass substitutes a producer's element,
//     its index variables replaced by the load's indices, for such a load (input_number()).
//   - Values are in the compute dtype (f32 for f16/bf16); storing converts to the output's
//     dtype, so 16-bit floats round once.
//   - A select whose condition reads the indices and no input and no local (pad's border,
//     concat's pieces) guards its branches: the branch not taken may read out of bounds, so it
//     must become a branch, not an eager select, when materialized.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/IR.h"
#include "ir/LibraryRoutine.h"
#include "ir/Module.h"

namespace dsc::passes::lowering {

// A condition that reads the indices and no input and no local, and a select on one: its
// branches are guarded (the one not taken may read out of bounds).
bool guards(const ir::PrimExpr& condition);
bool is_guarding_select(const ir::PrimExpr& e);

// Names unique within one prim, none of them a symbol of the fn or a word of the language.
class NameSet {
public:
  explicit NameSet(const std::set<std::string>& reserved);
  // `hint` itself when free; else hint0, hint1, ... (always numbered with `numbered`).
  std::string fresh(std::string_view hint, bool numbered = false);

private:
  std::set<std::string> taken_;
};

// The index space of one output (or of the reduced axes): one variable per dim, or 0 for a dim
// of extent 1.
struct IndexSpace {
  std::vector<symbolic::Expr> extents;
  std::vector<symbolic::Expr> vars;
};

// `let name = value`, a local the element needs more than once (take's wrapped index, the
// operands of a NaN-propagating maximum).
struct LocalLet {
  std::string name;
  ir::PrimExpr value;
};

// One element: its locals, then its value.
struct Element {
  std::vector<LocalLet> lets;
  ir::PrimExpr value;
};

// out[space.vars] = element, for one output.
struct MapOutput {
  IndexSpace space;
  Element element;
};

// out[space.vars] = finish(combine over reduced.vars of body), where the accumulator starts at
// `identity` (its dtype is the accumulator's) and only elements where `condition` holds (when
// defined: conv2d's padding) are combined.
struct Reduction {
  IndexSpace space;
  IndexSpace reduced;
  ir::BinaryOp combiner = ir::BinaryOp::Add; // Add, Mul, Max or Min
  ir::PrimExpr identity;
  Element body;
  ir::PrimExpr condition;
  std::string accumulator; // the local's name, which `finish` reads as a LocalRef
  ir::PrimExpr finish;     // undefined: the accumulator itself
};

struct ComputeDesc;

// A routine of ir/LibraryRoutines.def called on graph values (operands possibly reshaped by
// bindings inserted before the call, or read through strided views), and, when fuse gave it
// one, its epilogue: a map over a
// block of rows of the result (passes/legalize/Epilogue.h), whose inputs' args the call passes
// after the operands.
struct LibraryCall {
  const ir::LibraryRoutine* routine = nullptr;
  std::vector<ir::Expr> args;
  std::shared_ptr<const ComputeDesc> epilogue;
  // Per operand, empty or the strided view through which the routine reads args[k] (fuse reads
  // a permuted, reshaped or split operand from its source in place; ir/StridedView.h).
  std::vector<std::optional<ir::StridedView>> views;
  // Empty, or the view through which the routine writes its result into the buffer of the
  // call's type (fuse writes a product straight into the layout of a permute that reads it).
  std::optional<ir::StridedView> result_view;
  // The routine's attributes (ir/RoutineAttribute.h: a convolution's stride, ...).
  std::vector<ir::RoutineAttribute> attributes;
};

// One step of a stitched group (fuse's output, passes/legalize/Fuse.h, or argmax's and
// argmin's description), run once per row.
//   Reduce  the reduction (its space is the group's rows) into the row value `local`;
//   Scalar  `local` = element, computed once per row (its space is the group's rows);
//   Map     element stored to output `output` over `space`: the rows' variables, and loops of
//           its own over the dims where the rows have extent 1 (the reduced axes).
// A stage reads an earlier Reduce or Scalar stage as a LocalRef to its `local`, and an earlier
// Map stage by a load of that stage's output at the same indices (the row it just wrote). A
// Reduce or Scalar stage whose value is needed outside the group also stores it to `output`.
struct Stage {
  enum class Kind { Reduce, Scalar, Map };
  Kind kind = Kind::Map;
  Reduction reduction;
  IndexSpace space;
  Element element;
  std::string local;
  std::optional<size_t> output;
};

// Loops over `rows` (one variable per dim of extent other than 1), then the stages in order.
struct Stitch {
  IndexSpace rows;
  std::vector<Stage> stages;
};

struct ComputeDesc {
  enum class Kind {
    Map,     // an elementwise, broadcast or injective op: one MapOutput per output
    Reduce,  // sum/max/min/mean, and matmul and conv2d when not a library call
    Library, // a library routine the target offers
    View,    // the result aliases its operand (reshape): no code
    Stitch,  // a group fuse stitched (reductions with their producers and consumers), or
             // argmax/argmin's two reductions per row
  };
  struct Input {
    ir::Buffer buffer; // as the prim will declare it
    ir::Expr arg;      // the graph value passed for it
  };

  Kind kind = Kind::Map;
  std::string op; // names the prim: `<fn>_<op>_<n>`
  ir::Type type;  // the call's result type
  ir::Expr call;  // View: the call, which stays
  std::vector<Input> inputs;
  std::vector<ir::Buffer> outputs;
  std::vector<MapOutput> maps;
  Reduction reduction;
  Stitch stitch;
  LibraryCall library;
  // An epilogue's symbol for its block's first row (passes/legalize/Epilogue.h), or empty; the
  // prim declares it in its where clause (ir/LibraryRoutine.h).
  std::string first_row;
  NameSet names; // every name above, and the fn's symbols: fresh names come from here

  explicit ComputeDesc(NameSet n) : names(std::move(n)) {}

  // The operand a load reads, by number; nullopt for a buffer that is no input.
  std::optional<size_t> input_number(const ir::Load& load) const {
    for (size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k].buffer.name == load.buffer) return k;
    return std::nullopt;
  }
};

} // namespace dsc::passes::lowering
