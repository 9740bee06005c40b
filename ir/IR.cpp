#include "ir/IR.h"

namespace dsc::ir {

const char* node_kind_name(NodeKind kind) {
  switch (kind) {
#define DSC_IR_NODE(Name)                                                                          \
  case NodeKind::Name:                                                                             \
    return #Name;
#include "ir/Nodes.def"
  }
  return "?";
}

// ---------------------------------------------------------------- graph level

Ref<Var> Var::make(std::string name, Type type, SourceLoc loc) {
  internal_assert(!name.empty()) << "a Var needs a name";
  return Ref<Var>(new Var(std::move(name), std::move(type), loc));
}

namespace {
Type literal_type(const std::variant<int64_t, double, bool>& v) {
  DType d = std::holds_alternative<int64_t>(v)  ? DType::I64
            : std::holds_alternative<double>(v) ? DType::F32
                                                : DType::Bool;
  Type t = Type::scalar(d);
  t.weak = true;
  return t;
}
} // namespace

Expr Literal::make(std::variant<int64_t, double, bool> value, SourceLoc loc) {
  return make_typed(value, literal_type(value), loc);
}

Expr Literal::make_typed(std::variant<int64_t, double, bool> value, Type type, SourceLoc loc) {
  internal_assert(type.is_tensor() && type.rank() == 0) << "a Literal is a scalar";
  return Expr(Ref<ExprNode>(new Literal(value, std::move(type), loc)));
}

Expr StringImm::make(std::string value, SourceLoc loc) {
  return Expr(Ref<ExprNode>(new StringImm(std::move(value), loc)));
}

Expr ShapeExpr::make(std::vector<symbolic::Expr> dims, SourceLoc loc) {
  for (const symbolic::Expr& d : dims)
    internal_assert(d.defined() && !d.is_bool()) << "ShapeExpr dims are integer expressions";
  return Expr(Ref<ExprNode>(new ShapeExpr(std::move(dims), loc)));
}

Expr ListExpr::make(std::vector<Expr> items, Type type, SourceLoc loc) {
  for (const Expr& e : items)
    internal_assert(e.defined()) << "undefined ListExpr item";
  return Expr(Ref<ExprNode>(new ListExpr(std::move(items), std::move(type), loc)));
}

Expr Call::make(std::string callee, std::vector<Expr> args, std::vector<KeywordArg> kwargs,
                Type type, SourceLoc loc) {
  internal_assert(!callee.empty()) << "a Call needs a callee";
  for (const Expr& e : args)
    internal_assert(e.defined()) << "undefined argument to " << callee;
  for (const KeywordArg& k : kwargs)
    internal_assert(k.value.defined() && !k.name.empty()) << "bad keyword argument to " << callee;
  return Expr(Ref<ExprNode>(
      new Call(std::move(callee), std::move(args), std::move(kwargs), std::move(type), loc)));
}

const Expr* Call::kwarg(std::string_view name) const {
  for (const KeywordArg& k : kwargs)
    if (k.name == name) return &k.value;
  return nullptr;
}

Expr Tuple::make(std::vector<Expr> fields, Type type, SourceLoc loc) {
  for (const Expr& e : fields)
    internal_assert(e.defined()) << "undefined tuple field";
  return Expr(Ref<ExprNode>(new Tuple(std::move(fields), std::move(type), loc)));
}

Expr GetItem::make(Expr tuple, int index, Type type, SourceLoc loc) {
  internal_assert(tuple.defined() && index >= 0) << "bad GetItem";
  return Expr(Ref<ExprNode>(new GetItem(std::move(tuple), index, std::move(type), loc)));
}

Expr Block::make(std::vector<Binding> bindings, Expr result, SourceLoc loc) {
  internal_assert(result.defined()) << "a Block needs a result";
  for (const Binding& b : bindings) {
    internal_assert(!b.vars.empty() && b.value.defined()) << "bad binding";
    internal_assert(!b.has_asserted_type || b.vars.size() == 1)
        << "a destructuring binding cannot assert a type";
  }
  Type t = result->type;
  return Expr(Ref<ExprNode>(new Block(std::move(bindings), std::move(result), std::move(t), loc)));
}

Expr If::make(Expr cond, Expr then_branch, Expr else_branch, Type type, SourceLoc loc) {
  internal_assert(cond.defined() && then_branch.is<Block>() && else_branch.is<Block>())
      << "If needs a condition and two Blocks";
  return Expr(Ref<ExprNode>(new If(std::move(cond), std::move(then_branch), std::move(else_branch),
                                   std::move(type), loc)));
}

Expr If::make_guarded(symbolic::Expr guard, Expr then_branch, Expr else_branch, Type type,
                      SourceLoc loc) {
  internal_assert(guard.defined() && guard.is_bool() && then_branch.is<Block>() &&
                  else_branch.is<Block>())
      << "a guarded If needs a shape predicate and two Blocks";
  auto* node = new If(Expr(), std::move(then_branch), std::move(else_branch), std::move(type), loc);
  node->guard = std::move(guard);
  return Expr(Ref<ExprNode>(node));
}

Expr Loop::make(std::string var, symbolic::Expr lo, Expr hi, symbolic::Expr bound,
                std::vector<VarRef> carries, std::vector<bool> declared, std::vector<Expr> inits,
                Expr cond, Expr body, symbolic::Expr trips, Type type, SourceLoc loc) {
  internal_assert(!var.empty() && lo.defined() && hi.defined() && body.is<Block>() &&
                  (!cond.defined() || cond.is<Block>()))
      << "Loop needs a var, bounds and a Block body";
  internal_assert(!carries.empty() && carries.size() == inits.size() &&
                  carries.size() == declared.size())
      << "Loop needs one init and one declaration flag per carry";
  auto* n = new Loop(loc, std::move(type));
  Expr out{Ref<ExprNode>(n)};
  n->var = std::move(var);
  n->lo = std::move(lo);
  n->hi = std::move(hi);
  n->bound = std::move(bound);
  n->carries = std::move(carries);
  n->declared = std::move(declared);
  n->inits = std::move(inits);
  n->cond = std::move(cond);
  n->body = std::move(body);
  n->trips = std::move(trips);
  return out;
}

Expr Loop::with(symbolic::Expr lo_, Expr hi_, std::vector<VarRef> carries_,
                std::vector<Expr> inits_, Expr cond_, Expr body_, symbolic::Expr trips_,
                Type type_) const {
  return make(var, std::move(lo_), std::move(hi_), bound, std::move(carries_), declared,
              std::move(inits_), std::move(cond_), std::move(body_), std::move(trips_),
              std::move(type_), loc);
}

// ---------------------------------------------------------------- prim level

PrimExpr IntImm::make(DType dtype, int64_t value, SourceLoc loc) {
  internal_assert(is_int(dtype) || dtype == DType::Bool) << "IntImm of " << dtype_name(dtype);
  return PrimExpr(Ref<PrimExprNode>(new IntImm(dtype, value, loc)));
}

PrimExpr FloatImm::make(DType dtype, double value, SourceLoc loc) {
  internal_assert(is_float(dtype)) << "FloatImm of " << dtype_name(dtype);
  return PrimExpr(Ref<PrimExprNode>(new FloatImm(dtype, value, loc)));
}

PrimExpr Index::make(symbolic::Expr value, SourceLoc loc) {
  internal_assert(value.defined() && !value.is_bool()) << "Index of a non-integer";
  return PrimExpr(Ref<PrimExprNode>(new Index(std::move(value), loc)));
}

PrimExpr Load::make(DType dtype, std::string buffer, std::vector<PrimExpr> indices, SourceLoc loc) {
  for (const PrimExpr& i : indices)
    internal_assert(i.defined() && (is_int(i->dtype))) << "Load index must be an integer";
  return PrimExpr(Ref<PrimExprNode>(new Load(dtype, std::move(buffer), std::move(indices), loc)));
}

PrimExpr LocalRef::make(DType dtype, std::string name, SourceLoc loc) {
  return PrimExpr(Ref<PrimExprNode>(new LocalRef(dtype, std::move(name), loc)));
}

const char* binary_op_name(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Min:
    return "min";
  case BinaryOp::Max:
    return "max";
  case BinaryOp::EQ:
    return "==";
  case BinaryOp::NE:
    return "!=";
  case BinaryOp::LT:
    return "<";
  case BinaryOp::LE:
    return "<=";
  case BinaryOp::GT:
    return ">";
  case BinaryOp::GE:
    return ">=";
  case BinaryOp::And:
    return "&&";
  case BinaryOp::Or:
    return "||";
  }
  return "?";
}

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::EQ || op == BinaryOp::NE || op == BinaryOp::LT || op == BinaryOp::LE ||
         op == BinaryOp::GT || op == BinaryOp::GE;
}

PrimExpr PrimBinary::make(BinaryOp op, PrimExpr a, PrimExpr b, SourceLoc loc) {
  internal_assert(a.defined() && b.defined()) << "undefined operand of " << binary_op_name(op);
  internal_assert(a->dtype == b->dtype)
      << "operands of " << binary_op_name(op) << " differ: " << dtype_name(a->dtype) << " vs "
      << dtype_name(b->dtype);
  bool logic = op == BinaryOp::And || op == BinaryOp::Or;
  internal_assert(!logic || a->dtype == DType::Bool) << "&& and || need bool operands";
  DType d = (is_comparison(op) || logic) ? DType::Bool : a->dtype;
  return PrimExpr(Ref<PrimExprNode>(new PrimBinary(op, std::move(a), std::move(b), d, loc)));
}

PrimExpr Intrinsic::make(DType dtype, IntrinsicId id, std::vector<PrimExpr> args, SourceLoc loc) {
  return make(dtype, std::string(intrinsic(id).name), std::move(args), loc);
}

bool Intrinsic::is(IntrinsicId id) const { return name == intrinsic(id).name; }

PrimExpr Intrinsic::make(DType dtype, std::string name, std::vector<PrimExpr> args, SourceLoc loc) {
  internal_assert(!name.empty()) << "an Intrinsic needs a name";
  for (const PrimExpr& a : args)
    internal_assert(a.defined()) << "undefined argument to " << name;
  return PrimExpr(Ref<PrimExprNode>(new Intrinsic(dtype, std::move(name), std::move(args), loc)));
}

PrimExpr Cast::make(DType dtype, PrimExpr value, SourceLoc loc) {
  internal_assert(value.defined()) << "Cast of an undefined value";
  return PrimExpr(Ref<PrimExprNode>(new Cast(dtype, std::move(value), loc)));
}

const char* for_kind_name(ForKind kind) {
  switch (kind) {
#define DSC_FOR_KIND(k, spelling, targets)                                                         \
  case ForKind::k:                                                                                 \
    return spelling;
#include "ir/ForKinds.def"
  }
  return "?";
}

std::optional<ForKind> for_kind_named(std::string_view name) {
#define DSC_FOR_KIND(k, spelling, targets)                                                         \
  if (name == spelling) return ForKind::k;
#include "ir/ForKinds.def"
  return std::nullopt;
}

Stmt For::make(std::string var, symbolic::Expr min, symbolic::Expr extent, ForKind kind, Stmt body,
               SourceLoc loc) {
  internal_assert(!var.empty() && min.defined() && extent.defined() && body.defined()) << "bad For";
  return Stmt(Ref<StmtNode>(
      new For(std::move(var), std::move(min), std::move(extent), kind, std::move(body), loc)));
}

Stmt Store::make(std::string buffer, std::vector<PrimExpr> indices, PrimExpr value, SourceLoc loc) {
  internal_assert(value.defined()) << "Store of an undefined value";
  for (const PrimExpr& i : indices)
    internal_assert(i.defined() && is_int(i->dtype)) << "Store index must be an integer";
  return Stmt(
      Ref<StmtNode>(new Store(std::move(buffer), std::move(indices), std::move(value), loc)));
}

Stmt LocalDecl::make(std::string name, DType dtype, bool is_mutable, PrimExpr init, SourceLoc loc) {
  internal_assert(init.defined() && init->dtype == dtype) << "LocalDecl init dtype mismatch";
  return Stmt(
      Ref<StmtNode>(new LocalDecl(std::move(name), dtype, is_mutable, std::move(init), loc)));
}

Stmt Assign::make(std::string name, PrimExpr value, SourceLoc loc) {
  internal_assert(value.defined()) << "Assign of an undefined value";
  return Stmt(Ref<StmtNode>(new Assign(std::move(name), std::move(value), loc)));
}

Stmt IfStmt::make(PrimExpr cond, Stmt then_body, Stmt else_body, SourceLoc loc) {
  internal_assert(cond.defined() && cond->dtype == DType::Bool && then_body.defined())
      << "bad IfStmt";
  return Stmt(
      Ref<StmtNode>(new IfStmt(std::move(cond), std::move(then_body), std::move(else_body), loc)));
}

const char* memory_scope_name(MemoryScope scope) {
  switch (scope) {
  case MemoryScope::Global:
    return "global";
  case MemoryScope::Local:
    return "local";
  case MemoryScope::Shared:
    return "shared";
  }
  return "?";
}

Stmt Alloc::make(std::string name, DType dtype, std::vector<symbolic::Expr> shape,
                 MemoryScope scope, SourceLoc loc) {
  for (const symbolic::Expr& d : shape)
    internal_assert(d.defined() && !d.is_bool()) << "bad Alloc dim";
  return Stmt(Ref<StmtNode>(new Alloc(std::move(name), dtype, std::move(shape), scope, loc)));
}

Stmt Seq::make(std::vector<Stmt> stmts, SourceLoc loc) {
  for (const Stmt& s : stmts)
    internal_assert(s.defined()) << "undefined statement in Seq";
  return Stmt(Ref<StmtNode>(new Seq(std::move(stmts), loc)));
}

Stmt Evaluate::make(PrimExpr value, SourceLoc loc) {
  internal_assert(value.defined()) << "Evaluate of an undefined value";
  return Stmt(Ref<StmtNode>(new Evaluate(std::move(value), loc)));
}

} // namespace dsc::ir
