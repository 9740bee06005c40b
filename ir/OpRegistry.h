#pragma once
// The primitive graph ops: each with its call signature and its shape rule. (Lowerings are
// added by the legalize pass.) The op set and signatures are the user's surface and follow
// the language reference's table (docs/language.md); ir/Ops.def lists them.
//
// A call is first bound to the op's signature (positional then keyword arguments, defaults
// filled in), reporting wrong arity, unknown or repeated keywords and wrong argument kinds as
// diagnostics. Then the shape rule computes the result type from the argument types,
// asking symbolic/ every shape question: dims proved equal are merged, dims proved unequal
// are an error (with a counterexample), and anything else becomes a ShapeFact that is
// checked at run time — never a guess.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "symbolic/Facts.h"
#include "symbolic/Prover.h"

namespace dsc::ir {

// What an op parameter accepts.
enum class ParamKind : uint8_t {
  Tensor,     // a tensor value (a literal scalar is a rank-0 tensor)
  TensorList, // `[a, b]`
  Shape,      // `[B, S*12, 64]`: a list of symbolic dims
  Int,        // an integer literal
  Dim,        // an integer literal or a symbolic dim (`S-1`, written as a one-dim ShapeExpr)
  IntOrShape, // `3` or `[S, T]` (split), `1` or `[1, 2]` (axis)
  Float,      // a float or integer literal
  Scalar,     // a float, integer or bool literal (full's value)
  DType,      // a string naming a dtype: "f16"
  Bool,       // true / false
};

struct ParamSpec {
  const char* name;
  ParamKind kind;
  bool has_default = false;
  // The default, built on demand (Literal, StringImm or ShapeExpr). With has_default and no
  // make_default the parameter is optional and its bound value is undefined when not given
  // (`sum`'s axis: all axes; `slice`'s end: the whole dim).
  Expr (*make_default)() = nullptr;
};

// A call bound to its op's signature: one entry per parameter, in signature order.
struct BoundArgs {
  std::vector<Expr> values;    // the argument (or default) per parameter
  std::vector<Type> types;     // the value's type (Unknown for non-tensors)
  std::vector<SourceLoc> locs; // where each argument was written (the call's for defaults)
  const Expr& operator[](size_t i) const { return values[i]; }
};

// Everything a shape rule may use. Rules never throw: they report through `error` and return
// nullopt.
class ShapeContext {
public:
  ShapeContext(DiagnosticEngine& diags, const symbolic::Facts& facts, symbolic::Prover& prover,
               std::vector<ShapeFact>& facts_out)
      : diags_(diags), facts_(facts), prover_(prover), facts_out_(facts_out) {}

  DiagnosticEngine& diags() { return diags_; }
  const symbolic::Facts& facts() const { return facts_; }
  symbolic::Prover& prover() { return prover_; }
  const std::vector<ShapeFact>& recorded() const { return facts_out_; }

  // Decides a predicate: Proved, Disproved when its negation is proved (it never holds;
  // `witness` then gets values of the predicate's symbols that falsify it), else Unknown.
  symbolic::Verdict decide(const symbolic::Expr& predicate, symbolic::Bindings* witness = nullptr);
  // Records a run-time check (once per canonical predicate), described by `what` and prefixed
  // with the current context (`in nn.softmax: `); inside a context it is located at the
  // outermost call.
  void record(const symbolic::Expr& predicate, SourceLoc loc, const std::string& what,
              ShapeFact::Origin origin = ShapeFact::Origin::Op,
              ShapeFact::Status status = ShapeFact::Status::Unchecked);

  // Are a and b equal? Proved: merge; Disproved everywhere (a != b proved): an error at loc
  // with the counterexample as a note, returns false; otherwise records a run-time check
  // ShapeFact `a == b` described by `what` and returns true.
  bool require_equal(const symbolic::Expr& a, const symbolic::Expr& b, SourceLoc loc,
                     const std::string& what);
  // The same for an arbitrary predicate (slice bounds, reshape element counts).
  bool require(const symbolic::Expr& predicate, SourceLoc loc, const std::string& what);
  // Proved under the facts (and nothing else counts).
  bool proved(const symbolic::Expr& predicate);
  // A fresh symbol for a data-dependent dim (nonzero's count), named from `hint` and distinct
  // from every reserved name and every symbol handed out before.
  symbolic::Expr fresh_symbol(std::string_view hint);
  void reserve_symbol(const std::string& name) { reserved_.insert(name); }
  // The canonical form of a dim under the facts.
  symbolic::Expr simplify(const symbolic::Expr& e);

  // Reports an error with the notes of every enclosing context (the call sites of the
  // stdlib functions being instantiated) attached.
  Diagnostic& error(SourceLoc loc, std::string message);
  // While a callee's body is inferred for one call: errors get `note`, facts get `prefix`.
  void push_context(Diagnostic::Note note, std::string prefix);
  void pop_context();

private:
  DiagnosticEngine& diags_;
  const symbolic::Facts& facts_;
  symbolic::Prover& prover_;
  std::vector<ShapeFact>& facts_out_;
  std::map<std::string, int> fresh_counters_; // per name stem
  std::set<std::string> reserved_;
  std::vector<std::pair<Diagnostic::Note, std::string>> context_;
};

// One enumerator per row of ir/Ops.def, named as the op is (as LLVM's Intrinsic::sqrt).
enum class OpId : uint8_t {
#define DSC_OP(name, ...) name,
#include "ir/Ops.def"
};
// The columns of ir/Ops.def; its header says what each value means.
enum class OpFamily : uint8_t { Elementwise, Reduce, Layout, Matmul, Conv, Pool, Creation };
enum class OpPattern : uint8_t {
  Elementwise,
  Broadcast,
  Injective,
  Reduction,
  OutputFusable,
  Opaque
};
enum class OpResult : uint8_t { New, View };

struct OpDef {
  const char* name;
  std::vector<ParamSpec> params;
  // Computes the call's result type; nullopt after reporting an error.
  std::optional<Type> (*infer)(const Call& call, const BoundArgs& args, ShapeContext& ctx);
  // From ir/Ops.def, filled in by the registry.
  OpId id = {};
  OpFamily family = {};
  OpPattern pattern = {};
  OpResult result = {};

  bool is_view() const { return result == OpResult::View; }
};

// The op named `name` ("add", "matmul"), or null.
const OpDef* find_op(std::string_view name);
const OpDef& op_def(OpId id);
// The op `callee` names, or nullopt for other callees (functions, prims, externs).
std::optional<OpId> op_id(std::string_view callee);
// The name to build a call of `id` with: ir::Call::make(op_name(OpId::reshape), ...).
const char* op_name(OpId id);
// Whether `callee` is an op whose result aliases its first operand's storage (reshape):
// nothing is computed, the result is a view of the operand's buffer.
bool is_view_op(std::string_view callee);
const char* op_pattern_name(OpPattern p);
// Every op, for `dscc repl :help` and tests.
const std::vector<const OpDef*>& all_ops();

// Binds a call's arguments to the op's parameters; nullopt after reporting an error.
// `arg_types` are the types of call.args (and of the keyword values, in order, after them).
std::optional<BoundArgs> bind_arguments(const OpDef& op, const Call& call,
                                        const std::vector<Type>& arg_types,
                                        const std::vector<Type>& kwarg_types,
                                        DiagnosticEngine& diags);
// The same, reporting through the context (so errors carry its notes).
std::optional<BoundArgs> bind_arguments(const OpDef& op, const Call& call,
                                        const std::vector<Type>& arg_types,
                                        const std::vector<Type>& kwarg_types, ShapeContext& ctx);

// Helpers shared by the shape rules and the passes.

// Where an argument was written, for diagnostics: its own location, except that a Var's is
// where the value was bound, so a Var argument (and one without a location) gets `fallback`,
// the call's or the list's.
SourceLoc argument_loc(const Expr& arg, SourceLoc fallback);
// A scalar literal, also written `-x` (neg of an int or float literal), as one Literal; null
// when `e` is not one.
Expr literal_value(const Expr& e);
// "S=1, T=2": the values of the symbols `of` mentions (every binding when `of` is undefined).
std::string format_bindings(const symbolic::Bindings& bindings, const symbolic::Expr& of = {});
// Replaces symbols by name (a callee's signature instantiated at a call site); the result is
// built raw, not simplified.
symbolic::Expr substitute(const symbolic::Expr& e,
                          const std::map<std::string, symbolic::Expr>& subst);
Type substitute(const Type& t, const std::map<std::string, symbolic::Expr>& subst);

} // namespace dsc::ir
