// Tensor programs (`prim`) parsed into loop-level IR.

#include <gtest/gtest.h>

#include "LangTestUtil.h"
#include "ir/IR.h"
#include "symbolic/Printer.h"

namespace dsc::lang {
namespace {

using testing::parse;

std::string dims(const std::vector<symbolic::Expr>& ds) {
  std::string out;
  for (size_t i = 0; i < ds.size(); ++i)
    out += (i ? ", " : "") + symbolic::to_string(ds[i]);
  return out;
}

template <typename T> const T& as(const ir::Stmt& s) {
  const T* p = s.as<T>();
  internal_assert(p) << "statement is a " << ir::node_kind_name(s.kind());
  return *p;
}

template <typename T> const T& as(const ir::PrimExpr& e) {
  const T* p = e.as<T>();
  internal_assert(p) << "expression is a " << ir::node_kind_name(e.kind());
  return *p;
}

// The statements of prim `name`'s body.
const std::vector<ir::Stmt>& stmts(const ir::Module& m, const std::string& name) {
  return as<ir::Seq>(m.prim(name)->body).stmts;
}

// The prim's single statement inside `depth` nested loops.
const ir::Stmt& innermost(const ir::Module& m, const std::string& name, size_t index = 0) {
  const ir::Stmt* s = &stmts(m, name).front();
  while (const ir::For* f = s->as<ir::For>())
    s = &as<ir::Seq>(f->body).stmts.at(index);
  return *s;
}

std::string index_text(const ir::PrimExpr& e) {
  return symbolic::to_string(as<ir::Index>(e).value);
}

TEST(Prim, AddRelu) {
  auto p = parse(R"(
prim add_relu(a: f32[n], b: f32[n]) -> (y: f32[n]) {
  parallel for i in 0..n {
    y[i] = max(a[i] + b[i], 0.0)
  }
})");
  ASSERT_TRUE(p->module) << p->printed();
  Ref<ir::PrimFunc> prim = p->module->prim("add_relu");
  ASSERT_TRUE(prim.defined());
  ASSERT_EQ(prim->inputs.size(), 2u);
  ASSERT_EQ(prim->outputs.size(), 1u);
  EXPECT_EQ(prim->inputs[1].name, "b");
  EXPECT_EQ(prim->inputs[1].dtype, ir::DType::F32);
  EXPECT_EQ(dims(prim->outputs[0].shape), "n");
  EXPECT_EQ(prim->outputs[0].loc.line, 2u);
  const ir::For& loop = as<ir::For>(stmts(*p->module, "add_relu")[0]);
  EXPECT_EQ(loop.var, "i");
  EXPECT_EQ(loop.for_kind, ir::ForKind::Parallel);
  EXPECT_EQ(symbolic::to_string(loop.min), "0");
  EXPECT_EQ(symbolic::to_string(loop.extent), "n");
  const ir::Store& st = as<ir::Store>(innermost(*p->module, "add_relu"));
  EXPECT_EQ(st.buffer, "y");
  ASSERT_EQ(st.indices.size(), 1u);
  EXPECT_EQ(index_text(st.indices[0]), "i");
  const ir::PrimBinary& mx = as<ir::PrimBinary>(st.value);
  EXPECT_EQ(mx.op, ir::BinaryOp::Max);
  EXPECT_EQ(mx.dtype, ir::DType::F32);
  const ir::PrimBinary& add = as<ir::PrimBinary>(mx.a);
  EXPECT_EQ(add.op, ir::BinaryOp::Add);
  EXPECT_EQ(as<ir::Load>(add.a).buffer, "a");
  EXPECT_EQ(as<ir::Load>(add.a).dtype, ir::DType::F32);
  EXPECT_EQ(as<ir::FloatImm>(mx.b).dtype, ir::DType::F32);
}

TEST(Prim, LoopKindsAndBounds) {
  auto p = parse(R"(
prim p(a: f32[n, m]) -> (y: f32[n, m]) {
  for i in 1..n - 1 {
    vectorize for j in 0..m { y[i, j] = a[i, j] }
    unroll for k in i..i + 4 { y[i, 0] = a[i, 0] }
  }
})");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::For& outer = as<ir::For>(stmts(*p->module, "p")[0]);
  EXPECT_EQ(outer.for_kind, ir::ForKind::Serial);
  EXPECT_EQ(symbolic::to_string(outer.min), "1");
  EXPECT_EQ(symbolic::to_string(outer.extent), "n - 2"); // simplified
  const auto& inner = as<ir::Seq>(outer.body).stmts;
  ASSERT_EQ(inner.size(), 2u);
  EXPECT_EQ(as<ir::For>(inner[0]).for_kind, ir::ForKind::Vectorized);
  const ir::For& unrolled = as<ir::For>(inner[1]);
  EXPECT_EQ(unrolled.for_kind, ir::ForKind::Unrolled);
  EXPECT_EQ(symbolic::to_string(unrolled.min), "i");
  EXPECT_EQ(symbolic::to_string(unrolled.extent), "4");
}

TEST(Prim, IndexArithmeticIsSymbolic) {
  auto p = parse(R"(
prim p(a: f32[n * 4], idx: i64[n], small: i32[n]) -> (y: f32[n]) {
  for i in 0..n {
    y[i] = a[i * 4 + 3] + a[(i + 1) / 2 % n] + a[idx[i]] + a[min(i, n - 1)] + a[small[i]]
  }
})");
  ASSERT_TRUE(p->module) << p->printed();
  EXPECT_EQ(dims(p->module->prim("p")->inputs[0].shape), "n*4");
  const ir::Store& st = as<ir::Store>(innermost(*p->module, "p"));
  // ((((a0 + a1) + a2) + a3) + a4)
  const ir::PrimBinary* sum = st.value.as<ir::PrimBinary>();
  std::vector<const ir::Load*> loads;
  while (sum) {
    loads.insert(loads.begin(), &as<ir::Load>(sum->b));
    if (!sum->a.is<ir::PrimBinary>()) {
      loads.insert(loads.begin(), &as<ir::Load>(sum->a));
      break;
    }
    sum = sum->a.as<ir::PrimBinary>();
  }
  ASSERT_EQ(loads.size(), 5u);
  EXPECT_EQ(index_text(loads[0]->indices[0]), "i*4 + 3");
  EXPECT_EQ(index_text(loads[1]->indices[0]), "(i + 1)/2%n");
  const ir::Load& gather = as<ir::Load>(loads[2]->indices[0]);
  EXPECT_EQ(gather.buffer, "idx");
  EXPECT_EQ(gather.dtype, ir::DType::I64);
  EXPECT_EQ(index_text(loads[3]->indices[0]), "min(i, n - 1)");
  EXPECT_EQ(as<ir::Load>(loads[4]->indices[0]).dtype, ir::DType::I32);
}

TEST(Prim, LiteralsTakeTheOtherOperandsDtype) {
  auto p = parse(R"(
prim p(a: f16[n], c: i32[n]) -> (y: f16[n], z: i32[n], w: f64[n]) {
  for i in 0..n {
    y[i] = a[i] * 0.5 + 1
    z[i] = c[i] + 2
    w[i] = 2.0 * 3
    y[i] = -a[i]
    w[i] = -1.5
  }
})");
  ASSERT_TRUE(p->module) << p->printed();
  const auto& body = as<ir::Seq>(as<ir::For>(stmts(*p->module, "p")[0]).body).stmts;
  const ir::PrimBinary& y = as<ir::PrimBinary>(as<ir::Store>(body[0]).value);
  EXPECT_EQ(y.dtype, ir::DType::F16);
  EXPECT_EQ(as<ir::FloatImm>(as<ir::PrimBinary>(y.a).b).dtype, ir::DType::F16);
  const ir::FloatImm& one = as<ir::FloatImm>(y.b); // an int literal in float context
  EXPECT_EQ(one.dtype, ir::DType::F16);
  EXPECT_DOUBLE_EQ(one.value, 1.0);
  const ir::PrimBinary& z = as<ir::PrimBinary>(as<ir::Store>(body[1]).value);
  EXPECT_EQ(as<ir::IntImm>(z.b).dtype, ir::DType::I32);
  EXPECT_EQ(as<ir::IntImm>(z.b).value, 2);
  const ir::PrimBinary& w = as<ir::PrimBinary>(as<ir::Store>(body[2]).value);
  EXPECT_EQ(as<ir::FloatImm>(w.a).dtype, ir::DType::F64);
  EXPECT_EQ(as<ir::FloatImm>(w.b).dtype, ir::DType::F64);
  const ir::Intrinsic& neg = as<ir::Intrinsic>(as<ir::Store>(body[3]).value);
  EXPECT_EQ(neg.name, "neg");
  EXPECT_EQ(neg.dtype, ir::DType::F16);
  EXPECT_DOUBLE_EQ(as<ir::FloatImm>(as<ir::Store>(body[4]).value).value, -1.5);
}

TEST(Prim, LocalsAndAssignment) {
  auto p = parse(R"(
prim rowsum(a: f32[n, m]) -> (y: f32[n]) {
  for i in 0..n {
    var acc: f32 = 0.0
    let base = i * m
    for j in 0..m {
      acc = acc + a[i, j]
    }
    let scale: f32 = 2
    y[i] = acc * scale
  }
})");
  ASSERT_TRUE(p->module) << p->printed();
  const auto& body = as<ir::Seq>(as<ir::For>(stmts(*p->module, "rowsum")[0]).body).stmts;
  ASSERT_EQ(body.size(), 5u);
  const ir::LocalDecl& acc = as<ir::LocalDecl>(body[0]);
  EXPECT_EQ(acc.name, "acc");
  EXPECT_TRUE(acc.is_mutable);
  EXPECT_EQ(acc.dtype, ir::DType::F32);
  const ir::LocalDecl& base = as<ir::LocalDecl>(body[1]);
  EXPECT_FALSE(base.is_mutable);
  EXPECT_EQ(base.dtype, ir::DType::I64); // from the value
  EXPECT_EQ(index_text(base.init), "i*m");
  const ir::Assign& assign = as<ir::Assign>(as<ir::Seq>(as<ir::For>(body[2]).body).stmts[0]);
  EXPECT_EQ(assign.name, "acc");
  const ir::PrimBinary& add = as<ir::PrimBinary>(assign.value);
  EXPECT_EQ(as<ir::LocalRef>(add.a).name, "acc");
  EXPECT_EQ(as<ir::LocalRef>(add.a).dtype, ir::DType::F32);
  EXPECT_EQ(as<ir::FloatImm>(as<ir::LocalDecl>(body[3]).init).value, 2.0);
}

TEST(Prim, ScalarFunctions) {
  auto p = parse(R"(
prim p(a: f32[n], c: bool[n]) -> (y: f32[n], h: f16[n], k: i64[n]) {
  for i in 0..n {
    y[i] = exp(a[i]) + log(a[i]) + tanh(a[i]) + erf(a[i]) + sqrt(a[i]) + rsqrt(a[i]) + sigmoid(a[i])
    y[i] = abs(a[i]) + pow(a[i], 2.0) + min(a[i], 1.0)
    y[i] = select(c[i] && !c[i], a[i], 0.0)
    h[i] = cast(a[i], "f16")
    k[i] = cast(a[i], dtype="i64")
  }
})");
  ASSERT_TRUE(p->module) << p->printed();
  const auto& body = as<ir::Seq>(as<ir::For>(stmts(*p->module, "p")[0]).body).stmts;
  const ir::Intrinsic& exp_call = as<ir::Intrinsic>(
      as<ir::PrimBinary>(
          as<ir::PrimBinary>(
              as<ir::PrimBinary>(
                  as<ir::PrimBinary>(
                      as<ir::PrimBinary>(as<ir::PrimBinary>(as<ir::Store>(body[0]).value).a).a)
                      .a)
                  .a)
              .a)
          .a);
  EXPECT_EQ(exp_call.name, "exp");
  EXPECT_EQ(exp_call.dtype, ir::DType::F32);
  const ir::PrimBinary& second = as<ir::PrimBinary>(as<ir::Store>(body[1]).value);
  EXPECT_EQ(as<ir::PrimBinary>(second.b).op, ir::BinaryOp::Min);
  EXPECT_EQ(as<ir::Intrinsic>(as<ir::PrimBinary>(second.a).b).name, "pow");
  const ir::Intrinsic& sel = as<ir::Intrinsic>(as<ir::Store>(body[2]).value);
  EXPECT_EQ(sel.name, "select");
  ASSERT_EQ(sel.args.size(), 3u);
  const ir::PrimBinary& cond = as<ir::PrimBinary>(sel.args[0]);
  EXPECT_EQ(cond.op, ir::BinaryOp::And);
  EXPECT_EQ(as<ir::Intrinsic>(cond.b).name, "logical_not");
  const ir::Cast& to_half = as<ir::Cast>(as<ir::Store>(body[3]).value);
  EXPECT_EQ(to_half.dtype, ir::DType::F16);
  EXPECT_EQ(as<ir::Cast>(as<ir::Store>(body[4]).value).dtype, ir::DType::I64);
}

TEST(Prim, ComparisonsAndIf) {
  auto p = parse(R"(
prim p(a: f32[n]) -> (y: f32[n]) {
  for i in 0..n {
    if 0 < i < n - 1 {
      y[i] = a[i]
    } else if a[i] > 0.0 {
      y[i] = 1.0
    } else {
      y[i] = 0.0
    }
    if i == 0 { y[0] = 0.0 }
  }
})");
  ASSERT_TRUE(p->module) << p->printed();
  const auto& body = as<ir::Seq>(as<ir::For>(stmts(*p->module, "p")[0]).body).stmts;
  const ir::IfStmt& first = as<ir::IfStmt>(body[0]);
  const ir::PrimBinary& chain = as<ir::PrimBinary>(first.cond);
  EXPECT_EQ(chain.op, ir::BinaryOp::And);
  EXPECT_EQ(as<ir::PrimBinary>(chain.a).op, ir::BinaryOp::LT);
  EXPECT_EQ(index_text(as<ir::PrimBinary>(chain.b).b), "n - 1");
  const ir::IfStmt& nested = as<ir::IfStmt>(as<ir::Seq>(first.else_body).stmts[0]);
  EXPECT_EQ(as<ir::PrimBinary>(nested.cond).op, ir::BinaryOp::GT);
  EXPECT_TRUE(nested.else_body.defined());
  EXPECT_FALSE(as<ir::IfStmt>(body[1]).else_body.defined());
}

TEST(Prim, AllocAndEvaluate) {
  auto p = parse(R"(
prim p(a: f32[n]) -> (y: f32[n]) where n % 64 == 0 {
  parallel for b in 0..n / 64 {
    alloc tile: f32[64] shared
    alloc t2: f32[64, 2]
    alloc t3: i32[b + 1] global
    for t in 0..64 { tile[t] = a[b * 64 + t] }
    sync_threads()
    for t in 0..64 { y[b * 64 + t] = tile[63 - t] }
  }
})");
  ASSERT_TRUE(p->module) << p->printed();
  Ref<ir::PrimFunc> prim = p->module->prim("p");
  ASSERT_EQ(prim->where.size(), 1u);
  EXPECT_EQ(symbolic::to_string(prim->where[0].predicate), "n%64 == 0");
  const auto& body = as<ir::Seq>(as<ir::For>(prim->body.as<ir::Seq>()->stmts[0]).body).stmts;
  const ir::Alloc& tile = as<ir::Alloc>(body[0]);
  EXPECT_EQ(tile.name, "tile");
  EXPECT_EQ(tile.scope, ir::MemoryScope::Shared);
  EXPECT_EQ(dims(tile.shape), "64");
  EXPECT_EQ(as<ir::Alloc>(body[1]).scope, ir::MemoryScope::Local); // the default
  EXPECT_EQ(as<ir::Alloc>(body[2]).scope, ir::MemoryScope::Global);
  EXPECT_EQ(dims(as<ir::Alloc>(body[2]).shape), "b + 1");
  const ir::Evaluate& sync = as<ir::Evaluate>(body[4]);
  EXPECT_EQ(as<ir::Intrinsic>(sync.value).name, "sync_threads");
}

TEST(Prim, RankZeroBuffers) {
  auto p = parse("prim p(a: f32[]) -> (y: f32[]) { y[] = a[] * 2.0 }");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Store& st = as<ir::Store>(stmts(*p->module, "p")[0]);
  EXPECT_TRUE(st.indices.empty());
}

TEST(Prim, AnonymousDims) {
  auto p = parse("prim p(a: f32[?, ?]) -> (y: f32[_d0]) { for i in 0.._d0 { y[i] = a[i, 0] } }");
  ASSERT_TRUE(p->module) << p->printed();
  Ref<ir::PrimFunc> prim = p->module->prim("p");
  EXPECT_EQ(dims(prim->inputs[0].shape), "_d0, _d1");
  EXPECT_EQ(dims(prim->outputs[0].shape), "_d0");
}

TEST(Prim, StoreToInputIsAllowed) {
  auto p = parse("prim p(a: f32[n]) -> (y: f32[n]) { for i in 0..n { a[i] = 0.0 y[i] = a[i] } }");
  EXPECT_TRUE(p->module) << p->printed();
}

} // namespace
} // namespace dsc::lang
