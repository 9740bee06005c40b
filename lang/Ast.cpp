#include "lang/Ast.h"

#include <algorithm>

#include "support/Precedence.h"

namespace dsc::lang::ast {

Expr::Expr() = default;
Expr::~Expr() = default;
Expr::Expr(Expr&&) noexcept = default;
Expr& Expr::operator=(Expr&&) noexcept = default;

const char* op_spelling(Op op) {
  switch (op) {
#define DSC_OPERATOR(Name, callee, spelling, arity)                                                \
  case Op::Name:                                                                                   \
    return spelling;
#include "ir/Operators.def"
  }
  return "?";
}

namespace {

int height(const ExprPtr& e) {
  return e ? e->height : 0;
}

int max_height(const std::vector<ExprPtr>& exprs) {
  int h = 0;
  for (const ExprPtr& e : exprs)
    h = std::max(h, height(e));
  return h;
}

} // namespace

ExprPtr make_leaf(ExprKind kind, SourceLoc loc) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->loc = loc;
  return e;
}

ExprPtr make_unary(Op op, SourceLoc loc, ExprPtr x) {
  ExprPtr e = make_leaf(ExprKind::Unary, loc);
  e->op = op;
  e->height = 1 + height(x);
  e->operands.push_back(std::move(x));
  return e;
}

ExprPtr make_binary(Op op, SourceLoc loc, ExprPtr a, ExprPtr b) {
  ExprPtr e = make_leaf(ExprKind::Binary, loc);
  e->op = op;
  // `a + b + c` at one level counts as one level of nesting, however long: the chain's
  // height is its tallest operand's, plus one.
  auto level = [](Op o) { return precedence::infix_level(op_spelling(o)); };
  bool chained = a && a->kind == ExprKind::Binary && !a->parenthesized && level(a->op) == level(op);
  e->height = chained ? std::max(a->height, 1 + height(b)) : 1 + std::max(height(a), height(b));
  e->chain_length = chained ? a->chain_length + 1 : 1;
  e->operands.push_back(std::move(a));
  e->operands.push_back(std::move(b));
  return e;
}

ExprPtr make_compare(Op op, SourceLoc loc, ExprPtr lhs, ExprPtr rhs) {
  // A chain resolves to one link per operator joined with `&&`, so each operator adds a level.
  if (lhs->kind == ExprKind::Compare && !lhs->parenthesized) {
    lhs->ops.push_back(op);
    lhs->op_locs.push_back(loc);
    lhs->height = std::max(lhs->height, height(rhs)) + 1;
    lhs->operands.push_back(std::move(rhs));
    return lhs;
  }
  ExprPtr e = make_leaf(ExprKind::Compare, loc);
  e->ops.push_back(op);
  e->op_locs.push_back(loc);
  e->height = 1 + std::max(height(lhs), height(rhs));
  e->operands.push_back(std::move(lhs));
  e->operands.push_back(std::move(rhs));
  return e;
}

ExprPtr make_call(std::string callee, SourceLoc loc, std::vector<Arg> args) {
  ExprPtr e = make_leaf(ExprKind::Call, loc);
  e->text = std::move(callee);
  int h = 0;
  for (const Arg& a : args)
    h = std::max(h, height(a.value));
  e->height = 1 + h;
  e->args = std::move(args);
  return e;
}

ExprPtr make_index(SourceLoc loc, ExprPtr base, std::vector<ExprPtr> indices) {
  ExprPtr e = make_leaf(ExprKind::Index, loc);
  e->height = 1 + std::max(height(base), max_height(indices));
  e->operands.push_back(std::move(base));
  for (ExprPtr& i : indices)
    e->operands.push_back(std::move(i));
  return e;
}

ExprPtr make_list(ExprKind kind, SourceLoc loc, std::vector<ExprPtr> items) {
  ExprPtr e = make_leaf(kind, loc);
  e->height = 1 + max_height(items);
  e->operands = std::move(items);
  return e;
}

ExprPtr make_if(SourceLoc loc, ExprPtr cond, std::unique_ptr<Block> then_block,
                std::unique_ptr<Block> else_block) {
  ExprPtr e = make_leaf(ExprKind::If, loc);
  int h = height(cond);
  if (then_block) h = std::max(h, then_block->height);
  if (else_block) h = std::max(h, else_block->height);
  e->height = 1 + h;
  e->operands.push_back(std::move(cond));
  e->then_block = std::move(then_block);
  e->else_block = std::move(else_block);
  return e;
}

ExprPtr make_for(SourceLoc loc, std::unique_ptr<LoopParts> parts) {
  ExprPtr e = make_leaf(ExprKind::For, loc);
  int h = std::max(height(parts->lo), height(parts->hi));
  for (const ExprPtr& w : parts->where)
    h = std::max(h, height(w));
  for (const Carry& c : parts->carries)
    h = std::max({h, height(c.init), c.has_type ? c.type.height : 0});
  if (parts->cond) h = std::max(h, parts->cond->height);
  if (parts->body) h = std::max(h, parts->body->height);
  e->height = 1 + h;
  e->loop = std::move(parts);
  return e;
}

void update_height(Block& b) {
  int h = height(b.result);
  for (const StmtPtr& s : b.stmts)
    if (s) h = std::max(h, s->height);
  b.height = 1 + h;
}

void update_height(Stmt& s) {
  int h = std::max({height(s.value), height(s.target), height(s.lo), height(s.hi), height(s.cond),
                    s.has_type ? s.type.height : 0});
  if (s.body) h = std::max(h, s.body->height);
  if (s.else_body) h = std::max(h, s.else_body->height);
  s.height = 1 + h;
}

// Declarations travel by pointer: they are the largest values, and the parser's stack cells
// are as large as the largest value.
std::unique_ptr<Decl> make_decl(DeclKind kind, const Span& at, std::string name,
                                const Span& name_at) {
  auto d = std::make_unique<Decl>();
  d->kind = kind;
  d->loc = at.begin;
  d->name = Ident{std::move(name), name_at.begin};
  return d;
}

TypeNode named_type(std::string name, const Span& at) {
  TypeNode t;
  t.kind = TypeNode::Kind::Named;
  t.name = std::move(name);
  t.loc = at.begin;
  return t;
}

TypeNode tensor_type(std::string name, const Span& at, std::vector<ExprPtr> dims) {
  TypeNode t = named_type(std::move(name), at);
  t.kind = TypeNode::Kind::Tensor;
  for (const ExprPtr& d : dims) t.height = std::max(t.height, d->height + 1);
  t.dims = std::move(dims);
  return t;
}

TypeNode tuple_type(const Span& at, std::vector<TypeNode> fields) {
  TypeNode t;
  t.kind = TypeNode::Kind::Tuple;
  t.loc = at.begin;
  for (const TypeNode& f : fields) t.height = std::max(t.height, f.height + 1);
  t.fields = std::move(fields);
  return t;
}

StmtPtr make_stmt(StmtKind kind, const Span& at) {
  auto s = std::make_unique<Stmt>();
  s->kind = kind;
  s->loc = at.begin;
  return s;
}

std::unique_ptr<Block> make_block(const Span& open, const Span& close, std::vector<StmtPtr> stmts,
                                  ExprPtr result) {
  auto b = std::make_unique<Block>();
  b->loc = open.begin;
  b->end_loc = close.begin;
  for (StmtPtr& s : stmts)
    if (s) b->stmts.push_back(std::move(s));
  b->result = std::move(result);
  update_height(*b);
  return b;
}

// `else if ...` is an else block whose only content is the nested `if`.
std::unique_ptr<Block> wrap_expr(ExprPtr e) {
  auto b = std::make_unique<Block>();
  b->loc = e->loc;
  b->end_loc = e->loc;
  b->result = std::move(e);
  update_height(*b);
  return b;
}

std::unique_ptr<Block> wrap_stmt(StmtPtr s) {
  auto b = std::make_unique<Block>();
  if (s) {
    b->loc = s->loc;
    b->end_loc = s->loc;
    b->stmts.push_back(std::move(s));
  }
  update_height(*b);
  return b;
}

} // namespace dsc::lang::ast
