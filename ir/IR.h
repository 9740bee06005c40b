#pragma once
// The IR nodes of all three levels. Semantics:
//
// Graph level (`fn` bodies), tensor- or tuple-valued Exprs:
//   Var        a parameter or a let-bound value; identity is the node, the name is for printing.
//   Literal    a scalar constant (int, float or bool); weakly typed (see Type.h).
//   StringImm  a string argument (`dtype="f16"`).
//   ShapeExpr  a list of symbolic dims (`[B, S*12, 64]` in reshape, `[0, 2, 1]` in permute).
//   ListExpr   a list of tensors (`[a, b]` in concat).
//   Call       an op, stdlib composite, graph function or extern, by name, with positional
//              arguments and keyword arguments in source order. Infix `a + b` is Call("add").
//   Tuple, GetItem   tuples and their elements.
//   If         `if cond { ... } else { ... }`: cond is a bool tensor of rank 0; both branches
//              are Blocks whose results have the same type.
//   Loop       `for i in lo..hi [where i < bound] carry (c = init, ...) [while cond] { body }`:
//              the body runs for i = lo, lo+1, ... while i < hi and (when given) cond holds
//              before the iteration, and its result is the next carries. See Loop below.
//   Block      `let` bindings in order, then a result. A binding with several vars destructures
//              a tuple (`let q, k, v = split(...)`); one with an asserted type checks it, and any
//              symbol first named there is bound from the value's run-time shape.
// Every graph Expr has a `type`, Unknown until infer_shapes has run.
//
// Prim level (`prim` bodies), scalar PrimExprs with a dtype, and Stmts:
//   IntImm, FloatImm   constants.
//   Index      an integer value given by a symbolic expression over symbols and loop variables
//              (i64); index arithmetic lives in symbolic/ so that bounds can be proved.
//   Load       `buf[i, j]`; the indices are PrimExprs (usually Index).
//   LocalRef   reads a local variable declared by LocalDecl.
//   PrimBinary arithmetic (`/` on integers is floordiv, `%` floormod, as in symbolic/),
//              comparisons (bool), `&&`, `||`, min and max.
//   Intrinsic  a named scalar function: a row of ir/Intrinsics.def (exp, sqrt, pow,
//              select(cond, a, b), ...), or an effect a backend may know (`barrier()`).
//   Cast       dtype conversion.
//   For        `[parallel|vectorize|unroll] for i in min..min+extent { body }`; the loop
//              variable is the symbol `var` inside symbolic expressions.
//   Store      `buf[i, j] = value`.
//   LocalDecl  `let x: f32 = init` (immutable) or `var x: f32 = init` (assignable).
//   Assign     `x = value` for a `var` local.
//   IfStmt     `if cond { ... } else { ... }`.
//   Alloc      a buffer local to the rest of its enclosing Seq (`alloc t: f32[64] local`).
//   Seq        statements in order.
//   Evaluate   an intrinsic called for its effect.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ir/Intrinsics.h"
#include "ir/Type.h"
#include "support/Diagnostics.h"
#include "support/RefCounted.h"
#include "symbolic/Expr.h"

namespace dsc::ir {

enum class NodeKind : uint8_t {
#define DSC_IR_NODE(Name) Name,
#include "ir/Nodes.def"
};
const char* node_kind_name(NodeKind kind);

struct IRNode : RefCounted {
  const NodeKind kind;
  SourceLoc loc;

protected:
  IRNode(NodeKind k, SourceLoc l) : kind(k), loc(l) {}
};

// A typed handle over one family of nodes, with `as<T>()` downcasts that check the kind.
template <typename Base> class NodeRef : public Ref<Base> {
public:
  using Ref<Base>::Ref;
  NodeRef() = default;
  template <typename U> NodeRef(const Ref<U>& r) : Ref<Base>(r) {} // NOLINT

  NodeKind kind() const { return this->get()->kind; }
  template <typename T> const T* as() const {
    const Base* p = this->get();
    if (p && p->kind == T::node_kind) return static_cast<const T*>(p);
    return nullptr;
  }
  template <typename T> bool is() const { return as<T>() != nullptr; }
};

struct ExprNode : IRNode {
  Type type;

protected:
  ExprNode(NodeKind k, SourceLoc l, Type t) : IRNode(k, l), type(std::move(t)) {}
};
struct PrimExprNode : IRNode {
  DType dtype;

protected:
  PrimExprNode(NodeKind k, SourceLoc l, DType d) : IRNode(k, l), dtype(d) {}
};
struct StmtNode : IRNode {
protected:
  StmtNode(NodeKind k, SourceLoc l) : IRNode(k, l) {}
};

using Expr = NodeRef<ExprNode>;
using PrimExpr = NodeRef<PrimExprNode>;
using Stmt = NodeRef<StmtNode>;

// ---------------------------------------------------------------- graph level

// `_`: a `let` field that discards its value (`let _, b = split(x, 2)`). Every var of this name
// is a different var, never read; printers keep the name as it is.
inline constexpr std::string_view kDiscardName = "_";
inline bool is_discard_name(std::string_view name) {
  return name == kDiscardName;
}

struct Var : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::Var;
  std::string name;
  static Ref<Var> make(std::string name, Type type, SourceLoc loc = {});

private:
  Var(std::string n, Type t, SourceLoc l) : ExprNode(node_kind, l, std::move(t)), name(std::move(n)) {}
};
using VarRef = Ref<Var>;

struct Literal : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::Literal;
  std::variant<int64_t, double, bool> value;
  static Expr make(std::variant<int64_t, double, bool> value, SourceLoc loc = {});
  static Expr make_typed(std::variant<int64_t, double, bool> value, Type type, SourceLoc loc);

private:
  Literal(std::variant<int64_t, double, bool> v, Type t, SourceLoc l)
      : ExprNode(node_kind, l, std::move(t)), value(v) {}
};

struct StringImm : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::StringImm;
  std::string value;
  static Expr make(std::string value, SourceLoc loc = {});

private:
  StringImm(std::string v, SourceLoc l) : ExprNode(node_kind, l, Type::unknown()), value(std::move(v)) {}
};

struct ShapeExpr : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::ShapeExpr;
  std::vector<symbolic::Expr> dims;
  static Expr make(std::vector<symbolic::Expr> dims, SourceLoc loc = {});

private:
  ShapeExpr(std::vector<symbolic::Expr> d, SourceLoc l)
      : ExprNode(node_kind, l, Type::unknown()), dims(std::move(d)) {}
};

struct ListExpr : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::ListExpr;
  std::vector<Expr> items;
  static Expr make(std::vector<Expr> items, Type type = {}, SourceLoc loc = {});

private:
  ListExpr(std::vector<Expr> i, Type t, SourceLoc l) : ExprNode(node_kind, l, std::move(t)), items(std::move(i)) {}
};

struct KeywordArg {
  std::string name;
  Expr value;
  SourceLoc loc;
};

struct Call : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::Call;
  std::string callee; // "add", "nn.softmax", a fn or extern of the module
  std::vector<Expr> args;
  std::vector<KeywordArg> kwargs;
  static Expr make(std::string callee, std::vector<Expr> args, std::vector<KeywordArg> kwargs,
                   Type type = {}, SourceLoc loc = {});
  // The keyword argument `name`, or null.
  const Expr* kwarg(std::string_view name) const;

private:
  Call(std::string c, std::vector<Expr> a, std::vector<KeywordArg> k, Type t, SourceLoc l)
      : ExprNode(node_kind, l, std::move(t)), callee(std::move(c)), args(std::move(a)), kwargs(std::move(k)) {}
};

struct Tuple : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::Tuple;
  std::vector<Expr> fields;
  static Expr make(std::vector<Expr> fields, Type type = {}, SourceLoc loc = {});

private:
  Tuple(std::vector<Expr> f, Type t, SourceLoc l) : ExprNode(node_kind, l, std::move(t)), fields(std::move(f)) {}
};

struct GetItem : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::GetItem;
  Expr tuple;
  int index;
  static Expr make(Expr tuple, int index, Type type = {}, SourceLoc loc = {});

private:
  GetItem(Expr tu, int i, Type t, SourceLoc l) : ExprNode(node_kind, l, std::move(t)), tuple(std::move(tu)), index(i) {}
};

struct Binding {
  std::vector<VarRef> vars; // one, or several to destructure a tuple
  Expr value;
  bool has_asserted_type = false; // `let y: T = e`; the asserted type is vars[0]->type
  SourceLoc loc;
};

struct Block : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::Block;
  std::vector<Binding> bindings;
  Expr result;
  static Expr make(std::vector<Binding> bindings, Expr result, SourceLoc loc = {});

private:
  Block(std::vector<Binding> b, Expr r, Type t, SourceLoc l)
      : ExprNode(node_kind, l, std::move(t)), bindings(std::move(b)), result(std::move(r)) {}
};

struct If : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::If;
  Expr cond;             // a bool[] value; undefined when `guard` is set
  symbolic::Expr guard;  // or a shape predicate: legalize's guarded fusion variants
  Expr then_branch; // Block
  Expr else_branch; // Block
  static Expr make(Expr cond, Expr then_branch, Expr else_branch, Type type = {}, SourceLoc loc = {});
  static Expr make_guarded(symbolic::Expr guard, Expr then_branch, Expr else_branch, Type type,
                           SourceLoc loc = {});

private:
  If(Expr c, Expr t_, Expr e, Type t, SourceLoc l)
      : ExprNode(node_kind, l, std::move(t)), cond(std::move(c)), then_branch(std::move(t_)), else_branch(std::move(e)) {}
};

// A bounded loop with carried values. `var` names a symbol that carry types, `cond` and `body`
// may use: at the start of iteration i a carry has its type with var := i, and the body's
// result (a Tuple of the next carries, or the one carry's next value) has them at var := i + 1,
// so a carry may grow (`cache: f32[T + i, D]`). `hi` is a one-dim ShapeExpr, or an integer
// tensor of rank 0 (a run-time count), which needs `bound`, declaring i < bound. `cond` is a
// Block over the carries, tested before each iteration. The loop's value is the last carries
// (one value, or a tuple of them) at var := lo + trips; infer_shapes sets `trips`: hi - lo, or
// a fresh symbol bound when the loop ends (with `cond`, or a run-time hi).
struct Loop : ExprNode {
  static constexpr NodeKind node_kind = NodeKind::Loop;
  std::string var;
  symbolic::Expr lo;
  Expr hi;                       // ShapeExpr of one dim, or a scalar integer tensor
  symbolic::Expr bound;          // undefined when not declared
  std::vector<VarRef> carries;   // bound in cond and body
  std::vector<bool> declared;    // per carry: its type was written (and may use var)
  std::vector<Expr> inits;       // per carry
  Expr cond;                     // Block, or undefined
  Expr body;                     // Block
  symbolic::Expr trips;          // undefined before infer_shapes
  static Expr make(std::string var, symbolic::Expr lo, Expr hi, symbolic::Expr bound,
                   std::vector<VarRef> carries, std::vector<bool> declared,
                   std::vector<Expr> inits, Expr cond, Expr body, symbolic::Expr trips = {},
                   Type type = {}, SourceLoc loc = {});
  // A copy with other parts and the same var, bound and declarations.
  Expr with(symbolic::Expr lo, Expr hi, std::vector<VarRef> carries, std::vector<Expr> inits,
            Expr cond, Expr body, symbolic::Expr trips, Type type) const;

private:
  Loop(SourceLoc l, Type t) : ExprNode(node_kind, l, std::move(t)) {}
};

// ---------------------------------------------------------------- prim level

struct IntImm : PrimExprNode {
  static constexpr NodeKind node_kind = NodeKind::IntImm;
  int64_t value;
  static PrimExpr make(DType dtype, int64_t value, SourceLoc loc = {});

private:
  IntImm(DType d, int64_t v, SourceLoc l) : PrimExprNode(node_kind, l, d), value(v) {}
};

struct FloatImm : PrimExprNode {
  static constexpr NodeKind node_kind = NodeKind::FloatImm;
  double value;
  static PrimExpr make(DType dtype, double value, SourceLoc loc = {});

private:
  FloatImm(DType d, double v, SourceLoc l) : PrimExprNode(node_kind, l, d), value(v) {}
};

struct Index : PrimExprNode {
  static constexpr NodeKind node_kind = NodeKind::Index;
  symbolic::Expr value; // integer-valued
  static PrimExpr make(symbolic::Expr value, SourceLoc loc = {});

private:
  Index(symbolic::Expr v, SourceLoc l) : PrimExprNode(node_kind, l, DType::I64), value(std::move(v)) {}
};

struct Load : PrimExprNode {
  static constexpr NodeKind node_kind = NodeKind::Load;
  std::string buffer;
  std::vector<PrimExpr> indices;
  static PrimExpr make(DType dtype, std::string buffer, std::vector<PrimExpr> indices, SourceLoc loc = {});

private:
  Load(DType d, std::string b, std::vector<PrimExpr> i, SourceLoc l)
      : PrimExprNode(node_kind, l, d), buffer(std::move(b)), indices(std::move(i)) {}
};

struct LocalRef : PrimExprNode {
  static constexpr NodeKind node_kind = NodeKind::LocalRef;
  std::string name;
  static PrimExpr make(DType dtype, std::string name, SourceLoc loc = {});

private:
  LocalRef(DType d, std::string n, SourceLoc l) : PrimExprNode(node_kind, l, d), name(std::move(n)) {}
};

enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, Mod, Min, Max, EQ, NE, LT, LE, GT, GE, And, Or };
const char* binary_op_name(BinaryOp op); // "+", "min", ...
bool is_comparison(BinaryOp op);

struct PrimBinary : PrimExprNode {
  static constexpr NodeKind node_kind = NodeKind::PrimBinary;
  BinaryOp op;
  PrimExpr a, b;
  // The dtype is the operands' (which must agree), or bool for comparisons and logic.
  static PrimExpr make(BinaryOp op, PrimExpr a, PrimExpr b, SourceLoc loc = {});

private:
  PrimBinary(BinaryOp o, PrimExpr x, PrimExpr y, DType d, SourceLoc l)
      : PrimExprNode(node_kind, l, d), op(o), a(std::move(x)), b(std::move(y)) {}
};

struct Intrinsic : PrimExprNode {
  static constexpr NodeKind node_kind = NodeKind::Intrinsic;
  std::string name; // the row of ir/Intrinsics.def, as .dsc text spells it
  std::vector<PrimExpr> args;
  // Code names the row by id; `name` is for the parser, which resolves text.
  static PrimExpr make(DType dtype, IntrinsicId id, std::vector<PrimExpr> args, SourceLoc loc = {});
  static PrimExpr make(DType dtype, std::string name, std::vector<PrimExpr> args, SourceLoc loc = {});
  // Whether this calls row `id`.
  bool is(IntrinsicId id) const;

private:
  Intrinsic(DType d, std::string n, std::vector<PrimExpr> a, SourceLoc l)
      : PrimExprNode(node_kind, l, d), name(std::move(n)), args(std::move(a)) {}
};

struct Cast : PrimExprNode {
  static constexpr NodeKind node_kind = NodeKind::Cast;
  PrimExpr value;
  static PrimExpr make(DType dtype, PrimExpr value, SourceLoc loc = {});

private:
  Cast(DType d, PrimExpr v, SourceLoc l) : PrimExprNode(node_kind, l, d), value(std::move(v)) {}
};

// The loop kinds and the targets that run them: ir/ForKinds.def.
enum class ForKind : uint8_t {
#define DSC_FOR_KIND(kind, spelling, targets) kind,
#include "ir/ForKinds.def"
};
const char* for_kind_name(ForKind kind); // its .dsc spelling: "", "parallel", "block_x", ...
// The kind spelled `name` ("parallel", "thread_x"); nullopt for none.
std::optional<ForKind> for_kind_named(std::string_view name);

struct For : StmtNode {
  static constexpr NodeKind node_kind = NodeKind::For;
  std::string var;
  symbolic::Expr min, extent;
  ForKind for_kind;
  Stmt body;
  static Stmt make(std::string var, symbolic::Expr min, symbolic::Expr extent, ForKind kind, Stmt body,
                   SourceLoc loc = {});

private:
  For(std::string v, symbolic::Expr mn, symbolic::Expr ext, ForKind k, Stmt b, SourceLoc l)
      : StmtNode(node_kind, l), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)), for_kind(k),
        body(std::move(b)) {}
};

struct Store : StmtNode {
  static constexpr NodeKind node_kind = NodeKind::Store;
  std::string buffer;
  std::vector<PrimExpr> indices;
  PrimExpr value;
  static Stmt make(std::string buffer, std::vector<PrimExpr> indices, PrimExpr value, SourceLoc loc = {});

private:
  Store(std::string b, std::vector<PrimExpr> i, PrimExpr v, SourceLoc l)
      : StmtNode(node_kind, l), buffer(std::move(b)), indices(std::move(i)), value(std::move(v)) {}
};

struct LocalDecl : StmtNode {
  static constexpr NodeKind node_kind = NodeKind::LocalDecl;
  std::string name;
  DType dtype;
  bool is_mutable; // `var` rather than `let`
  PrimExpr init;
  static Stmt make(std::string name, DType dtype, bool is_mutable, PrimExpr init, SourceLoc loc = {});

private:
  LocalDecl(std::string n, DType d, bool m, PrimExpr i, SourceLoc l)
      : StmtNode(node_kind, l), name(std::move(n)), dtype(d), is_mutable(m), init(std::move(i)) {}
};

struct Assign : StmtNode {
  static constexpr NodeKind node_kind = NodeKind::Assign;
  std::string name;
  PrimExpr value;
  static Stmt make(std::string name, PrimExpr value, SourceLoc loc = {});

private:
  Assign(std::string n, PrimExpr v, SourceLoc l) : StmtNode(node_kind, l), name(std::move(n)), value(std::move(v)) {}
};

struct IfStmt : StmtNode {
  static constexpr NodeKind node_kind = NodeKind::IfStmt;
  PrimExpr cond;
  Stmt then_body;
  Stmt else_body; // may be undefined
  static Stmt make(PrimExpr cond, Stmt then_body, Stmt else_body, SourceLoc loc = {});

private:
  IfStmt(PrimExpr c, Stmt t, Stmt e, SourceLoc l)
      : StmtNode(node_kind, l), cond(std::move(c)), then_body(std::move(t)), else_body(std::move(e)) {}
};

enum class MemoryScope : uint8_t { Global, Local, Shared };
const char* memory_scope_name(MemoryScope scope); // "global", "local", "shared"

struct Alloc : StmtNode {
  static constexpr NodeKind node_kind = NodeKind::Alloc;
  std::string name;
  DType dtype;
  std::vector<symbolic::Expr> shape;
  MemoryScope scope;
  static Stmt make(std::string name, DType dtype, std::vector<symbolic::Expr> shape, MemoryScope scope,
                   SourceLoc loc = {});

private:
  Alloc(std::string n, DType d, std::vector<symbolic::Expr> s, MemoryScope sc, SourceLoc l)
      : StmtNode(node_kind, l), name(std::move(n)), dtype(d), shape(std::move(s)), scope(sc) {}
};

struct Seq : StmtNode {
  static constexpr NodeKind node_kind = NodeKind::Seq;
  std::vector<Stmt> stmts;
  static Stmt make(std::vector<Stmt> stmts, SourceLoc loc = {});

private:
  Seq(std::vector<Stmt> s, SourceLoc l) : StmtNode(node_kind, l), stmts(std::move(s)) {}
};

struct Evaluate : StmtNode {
  static constexpr NodeKind node_kind = NodeKind::Evaluate;
  PrimExpr value;
  static Stmt make(PrimExpr value, SourceLoc loc = {});

private:
  Evaluate(PrimExpr v, SourceLoc l) : StmtNode(node_kind, l), value(std::move(v)) {}
};

} // namespace dsc::ir
