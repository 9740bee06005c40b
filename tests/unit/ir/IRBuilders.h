#pragma once
// Small constructors for building IR by hand in the ir/ unit tests.

#include <string>
#include <utility>
#include <vector>

#include "ir/Module.h"
#include "symbolic/Expr.h"

namespace dsc::ir::test {

inline Type f32(std::vector<symbolic::Expr> shape) {
  return Type::tensor(DType::F32, std::move(shape));
}

inline VarRef var(const std::string& name, Type t = {}) {
  return Var::make(name, std::move(t));
}

inline Expr call(const std::string& callee, std::vector<Expr> args,
                 std::vector<KeywordArg> kwargs = {}) {
  return Call::make(callee, std::move(args), std::move(kwargs));
}
inline KeywordArg kw(const std::string& name, Expr value) {
  return KeywordArg{name, std::move(value), {}};
}
inline Expr lit(int64_t v) {
  return Literal::make(v);
}
inline Expr lit(double v) {
  return Literal::make(v);
}
inline Expr lit(bool v) {
  return Literal::make(v);
}

inline Expr block(std::vector<Binding> bindings, Expr result) {
  return Block::make(std::move(bindings), std::move(result));
}
inline Binding let(VarRef v, Expr value) {
  return Binding{{std::move(v)}, std::move(value), false, {}};
}

inline Ref<Function> function(const std::string& name, std::vector<VarRef> params, Type ret,
                              Expr body, std::vector<symbolic::Expr> where = {},
                              std::vector<Expr> defaults = {}) {
  auto* f = new Function;
  Ref<Function> ref(f);
  f->name = name;
  f->params = std::move(params);
  f->defaults = std::move(defaults);
  f->ret_type = std::move(ret);
  for (symbolic::Expr& w : where)
    f->where.push_back(WhereClause{std::move(w), {}});
  f->body = std::move(body);
  return ref;
}

inline Buffer buffer(const std::string& name, std::vector<symbolic::Expr> shape,
                     DType dtype = DType::F32) {
  return Buffer{name, dtype, std::move(shape), {}};
}

inline Ref<PrimFunc> prim(const std::string& name, std::vector<Buffer> inputs,
                          std::vector<Buffer> outputs, Stmt body,
                          std::vector<symbolic::Expr> where = {}) {
  auto* p = new PrimFunc;
  Ref<PrimFunc> ref(p);
  p->name = name;
  p->inputs = std::move(inputs);
  p->outputs = std::move(outputs);
  for (symbolic::Expr& w : where)
    p->where.push_back(WhereClause{std::move(w), {}});
  p->body = std::move(body);
  return ref;
}

inline Ref<ExternFunc> extern_fn(const std::string& name, std::vector<VarRef> params, Type ret,
                                 const std::string& symbol,
                                 std::vector<RoutineAttribute> attributes = {}) {
  auto* e = new ExternFunc;
  Ref<ExternFunc> ref(e);
  e->name = name;
  e->params = std::move(params);
  e->ret_type = std::move(ret);
  e->symbol = symbol;
  e->attributes = std::move(attributes);
  return ref;
}

inline PrimExpr idx(symbolic::Expr e) {
  return Index::make(std::move(e));
}
inline PrimExpr load(const std::string& b, std::vector<PrimExpr> indices,
                     DType dtype = DType::F32) {
  return Load::make(dtype, b, std::move(indices));
}
inline PrimExpr fimm(double v) {
  return FloatImm::make(DType::F32, v);
}
inline PrimExpr bin(BinaryOp op, PrimExpr a, PrimExpr b) {
  return PrimBinary::make(op, std::move(a), std::move(b));
}

} // namespace dsc::ir::test
