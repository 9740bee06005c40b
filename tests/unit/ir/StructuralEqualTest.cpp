#include "ir/StructuralEqual.h"

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "symbolic/Expr.h"
#include "tests/unit/ir/IRBuilders.h"

namespace dsc::ir {
namespace {

using symbolic::sym;
using namespace test;

Module module_of(Ref<Function> f) {
  Module m;
  m.add(std::move(f));
  return m;
}

// Asserts equality both ways and, as the contract requires, equal hashes.
::testing::AssertionResult equal(const Module& a, const Module& b) {
  if (!structural_equal(a, b)) return ::testing::AssertionFailure() << "a != b";
  if (!structural_equal(b, a)) return ::testing::AssertionFailure() << "b != a";
  if (structural_hash(a) != structural_hash(b))
    return ::testing::AssertionFailure() << "equal modules hash differently";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult unequal(const Module& a, const Module& b) {
  if (structural_equal(a, b)) return ::testing::AssertionFailure() << "a == b";
  if (structural_equal(b, a)) return ::testing::AssertionFailure() << "b == a";
  return ::testing::AssertionSuccess();
}

// A small attention-like function whose pieces each test varies. `names` picks the let-bound
// names so that alpha-renaming can be tested.
struct Spec {
  std::string callee = "matmul";
  DType dtype = DType::F32;
  symbolic::Expr dim = sym("B");
  int64_t axis = -1;
  std::string kw = "axis";
  bool swap_args = false;
  bool swap_kwargs = false;
  std::string y = "y", z = "z", param = "x";
  bool assert_type = false;
  symbolic::Expr asserted_dim = sym("N");
  std::vector<symbolic::Expr> where = {symbolic::le(1, sym("B"))};
  Type ret = f32({sym("B"), 8});
  double scale = 0.125;
};

Module build(const Spec& s) {
  VarRef x = var(s.param, Type::tensor(s.dtype, {s.dim, 8}));
  VarRef w = var("w", Type::tensor(s.dtype, {8, 8}));
  VarRef y = var(s.y, s.assert_type ? f32({s.asserted_dim, 8}) : Type::unknown());
  VarRef z = var(s.z);
  std::vector<Expr> args = s.swap_args ? std::vector<Expr>{w, x} : std::vector<Expr>{x, w};
  std::vector<KeywordArg> kwargs = {kw(s.kw, lit(s.axis)), kw("keepdims", lit(false))};
  if (s.swap_kwargs) std::swap(kwargs[0], kwargs[1]);
  Binding by{{y}, call(s.callee, args), s.assert_type, {}};
  Expr body = block({by, let(z, call("sum", {call("mul", {y, lit(s.scale)})}, kwargs))}, z);
  return module_of(function("f", {x, w}, s.ret, body, s.where));
}

TEST(StructuralEqualTest, IdenticalBuildsAreEqual) {
  EXPECT_TRUE(equal(build({}), build({})));
  Module m = build({});
  EXPECT_TRUE(equal(m, m));
}

TEST(StructuralEqualTest, AlphaRenamedLetsAreEqual) {
  Spec renamed;
  renamed.y = "hidden";
  renamed.z = "out";
  EXPECT_TRUE(equal(build({}), build(renamed)));
}

TEST(StructuralEqualTest, LocationsAndInferredTypesAreIgnored) {
  VarRef x1 = var("x", f32({4})), x2 = var("x", f32({4}));
  VarRef y1 = var("y", f32({4})), y2 = var("y"); // one inferred, one not
  SourceLoc loc{1, 2, 3};
  Expr v1 = Call::make("exp", {x1}, {}, f32({4}), loc);
  Expr v2 = Call::make("exp", {x2}, {});
  Module a = module_of(function("f", {x1}, Type::unknown(), block({let(y1, v1)}, y1)));
  Module b = module_of(function("f", {x2}, Type::unknown(), block({let(y2, v2)}, y2)));
  EXPECT_TRUE(equal(a, b));
}

TEST(StructuralEqualTest, DifferencesAreUnequal) {
  Module base = build({});
  auto differs = [&](const std::function<void(Spec&)>& change) {
    Spec s;
    change(s);
    return unequal(base, build(s));
  };
  EXPECT_TRUE(differs([](Spec& s) { s.callee = "add"; }));
  EXPECT_TRUE(differs([](Spec& s) { s.dtype = DType::F16; }));
  EXPECT_TRUE(differs([](Spec& s) { s.dim = sym("S"); }));
  EXPECT_TRUE(differs([](Spec& s) { s.dim = 2 * sym("B"); }));
  EXPECT_TRUE(differs([](Spec& s) { s.axis = 1; }));
  EXPECT_TRUE(differs([](Spec& s) { s.kw = "dim"; }));
  EXPECT_TRUE(differs([](Spec& s) { s.swap_args = true; }));
  EXPECT_TRUE(differs([](Spec& s) { s.swap_kwargs = true; }));
  EXPECT_TRUE(differs([](Spec& s) { s.param = "input"; })); // parameter names are the interface
  EXPECT_TRUE(differs([](Spec& s) { s.assert_type = true; }));
  EXPECT_TRUE(differs([](Spec& s) { s.where = {}; }));
  EXPECT_TRUE(differs([](Spec& s) { s.where = {symbolic::le(2, sym("B"))}; }));
  EXPECT_TRUE(differs([](Spec& s) { s.ret = Type::unknown(); }));
  EXPECT_TRUE(differs([](Spec& s) { s.ret = f32({sym("B"), 9}); }));
  EXPECT_TRUE(differs([](Spec& s) { s.scale = 0.25; }));
  Spec asserted;
  asserted.assert_type = true;
  Spec asserted_other = asserted;
  asserted_other.asserted_dim = sym("M");
  EXPECT_TRUE(equal(build(asserted), build(asserted)));
  EXPECT_TRUE(unequal(build(asserted), build(asserted_other)));
}

TEST(StructuralEqualTest, LiteralKindsAndBitsMatter) {
  auto with = [](Expr value) {
    VarRef x = var("x", f32({4}));
    return module_of(function("f", {x}, Type::unknown(), block({}, call("mul", {x, value}))));
  };
  EXPECT_TRUE(unequal(with(lit(int64_t{1})), with(lit(1.0))));
  EXPECT_TRUE(unequal(with(lit(int64_t{1})), with(lit(true))));
  EXPECT_TRUE(unequal(with(lit(0.0)), with(lit(-0.0))));
  EXPECT_TRUE(equal(with(lit(0.5)), with(lit(0.5))));
  EXPECT_TRUE(unequal(with(StringImm::make("f16")), with(StringImm::make("f32"))));
  EXPECT_TRUE(equal(with(ShapeExpr::make({sym("B"), 4})), with(ShapeExpr::make({sym("B"), 4}))));
  EXPECT_TRUE(unequal(with(ShapeExpr::make({sym("B"), 4})), with(ShapeExpr::make({sym("B")}))));
}

TEST(StructuralEqualTest, VarsMatchByBindingPosition) {
  VarRef x = var("x", f32({4})), w = var("w", f32({4}));
  VarRef a = var("a"), b = var("b");
  // `let a = exp(x); let b = exp(x); return a + b` vs `... return b + a`.
  auto make = [&](bool swapped) {
    Expr result = swapped ? call("add", {b, a}) : call("add", {a, b});
    return module_of(function("f", {x, w}, Type::unknown(),
                              block({let(a, call("exp", {x})), let(b, call("exp", {x}))}, result)));
  };
  EXPECT_TRUE(unequal(make(false), make(true)));
  // Using x vs w (both params, same type) differs.
  VarRef x2 = var("x", f32({4})), w2 = var("w", f32({4}));
  Module uses_x = module_of(function("f", {x, w}, Type::unknown(), block({}, call("exp", {x}))));
  Module uses_w = module_of(function("f", {x2, w2}, Type::unknown(), block({}, call("exp", {w2}))));
  EXPECT_TRUE(unequal(uses_x, uses_w));
  // A free variable (unbound) only equals one of the same name.
  VarRef free1 = var("q"), free2 = var("q"), free3 = var("r");
  auto with_free = [&](VarRef v) {
    VarRef p = var("x", f32({4}));
    return module_of(function("f", {p}, Type::unknown(), block({}, call("add", {p, v}))));
  };
  EXPECT_TRUE(equal(with_free(free1), with_free(free2)));
  EXPECT_TRUE(unequal(with_free(free1), with_free(free3)));
}

TEST(StructuralEqualTest, DestructuringTuplesIfsAndDefaults) {
  auto make = [](int index, bool swap_branches, int64_t default_axis) {
    VarRef c = var("c", Type::scalar(DType::Bool));
    VarRef x = var("x", f32({sym("B"), 6}));
    VarRef axis = var("axis", Type::of_kind(Type::Kind::Int));
    VarRef q = var("q"), k = var("k"), v = var("v"), t = var("t");
    Binding split{{q, k, v}, call("split", {x, lit(int64_t{3})}, {kw("axis", axis)}), false, {}};
    Expr then_b = block({let(t, Tuple::make({q, k}))}, GetItem::make(t, index));
    Expr else_b = block({}, v);
    Expr body =
        block({split}, swap_branches ? If::make(c, else_b, then_b) : If::make(c, then_b, else_b));
    return module_of(function("f", {c, x, axis}, Type::unknown(), body, {},
                              {Expr(), Expr(), lit(default_axis)}));
  };
  EXPECT_TRUE(equal(make(0, false, -1), make(0, false, -1)));
  EXPECT_TRUE(unequal(make(0, false, -1), make(1, false, -1)));
  EXPECT_TRUE(unequal(make(0, false, -1), make(0, true, -1)));
  EXPECT_TRUE(unequal(make(0, false, -1), make(0, false, 1)));
}

TEST(StructuralEqualTest, ModulesCompareImportsAndDeclOrder) {
  VarRef x = var("x", f32({4}));
  Ref<Function> f = function("f", {x}, Type::unknown(), block({}, x));
  VarRef x2 = var("x", f32({4}));
  Ref<Function> g = function("g", {x2}, Type::unknown(), block({}, x2));
  Module a;
  a.imports.push_back(Import{"nn", {}, nullptr});
  a.add(f);
  a.add(g);
  Module b = a;
  b.imports[0].loc = SourceLoc{3, 1, 1}; // imports by name only
  EXPECT_TRUE(equal(a, b));
  Module reordered;
  reordered.imports = a.imports;
  reordered.add(g);
  reordered.add(f);
  EXPECT_TRUE(unequal(a, reordered));
  Module no_import = a;
  no_import.imports.clear();
  EXPECT_TRUE(unequal(a, no_import));
  Module other_import = a;
  other_import.imports[0].name = "nn2";
  EXPECT_TRUE(unequal(a, other_import));
}

// ---------------------------------------------------------------- prims and externs

Ref<PrimFunc> add_relu(ForKind kind = ForKind::Parallel, double zero = 0.0,
                       const std::string& out = "y", bool wrap_body = true,
                       symbolic::Expr extent = sym("n")) {
  PrimExpr i = idx(sym("i"));
  Stmt store = Store::make(
      out, {i}, bin(BinaryOp::Max, bin(BinaryOp::Add, load("a", {i}), load("b", {i})), fimm(zero)));
  Stmt body = wrap_body ? Seq::make({store}) : store;
  return prim("add_relu", {buffer("a", {sym("n")}), buffer("b", {sym("n")})},
              {buffer(out, {sym("n")})}, Seq::make({For::make("i", 0, extent, kind, body)}));
}

Module module_of(Ref<PrimFunc> p) {
  Module m;
  m.add(std::move(p));
  return m;
}

TEST(StructuralEqualTest, Prims) {
  EXPECT_TRUE(equal(module_of(add_relu()), module_of(add_relu())));
  EXPECT_TRUE(unequal(module_of(add_relu()), module_of(add_relu(ForKind::Serial))));
  EXPECT_TRUE(unequal(module_of(add_relu()), module_of(add_relu(ForKind::Parallel, 1.0))));
  EXPECT_TRUE(unequal(module_of(add_relu()), module_of(add_relu(ForKind::Parallel, 0.0, "out"))));
  EXPECT_TRUE(unequal(module_of(add_relu()),
                      module_of(add_relu(ForKind::Parallel, 0.0, "y", true, sym("n") + 1))));
  // The text cannot tell a one-statement Seq from the statement.
  EXPECT_TRUE(
      equal(module_of(add_relu()), module_of(add_relu(ForKind::Parallel, 0.0, "y", false))));
}

TEST(StructuralEqualTest, PrimStatementNormalization) {
  auto with_body = [](Stmt body) {
    return module_of(prim("p", {}, {buffer("y", {4})}, std::move(body)));
  };
  Stmt s1 = Store::make("y", {idx(0)}, fimm(1.0));
  Stmt s2 = Store::make("y", {idx(1)}, fimm(2.0));
  EXPECT_TRUE(equal(with_body(Seq::make({s1, s2})),
                    with_body(Seq::make({Seq::make({s1}), Seq::make({s2, Seq::make({})})}))));
  EXPECT_TRUE(unequal(with_body(Seq::make({s1, s2})), with_body(Seq::make({s2, s1}))));
  PrimExpr cond = bin(BinaryOp::LT, idx(sym("n")), idx(4));
  EXPECT_TRUE(equal(with_body(IfStmt::make(cond, s1, Stmt())),
                    with_body(IfStmt::make(cond, s1, Seq::make({})))));
  EXPECT_TRUE(
      unequal(with_body(IfStmt::make(cond, s1, Stmt())), with_body(IfStmt::make(cond, s1, s2))));
  // Loops compare by the bounds they print: `for i in 1..n`.
  Stmt loop_a = For::make("i", 1, sym("n") - 1, ForKind::Serial, s1);
  Stmt loop_b = For::make("i", 1, sym("n") + (-1), ForKind::Serial, s1);
  Stmt loop_c = For::make("i", 1, sym("n"), ForKind::Serial, s1);
  Stmt loop_d = For::make("j", 1, sym("n") - 1, ForKind::Serial, s1);
  EXPECT_TRUE(equal(with_body(loop_a), with_body(loop_b)));
  EXPECT_TRUE(unequal(with_body(loop_a), with_body(loop_c)));
  EXPECT_TRUE(unequal(with_body(loop_a), with_body(loop_d)));
}

TEST(StructuralEqualTest, PrimExpressionsAndStatements) {
  auto with_body = [](Stmt body) {
    return module_of(
        prim("p", {buffer("a", {4}, DType::F16)}, {buffer("y", {4})}, std::move(body)));
  };
  PrimExpr a0 = load("a", {idx(0)}, DType::F16);
  std::vector<std::pair<Stmt, Stmt>> different = {
      {Store::make("y", {idx(0)}, Cast::make(DType::F32, a0)),
       Store::make("y", {idx(1)}, Cast::make(DType::F32, a0))},
      {Evaluate::make(Intrinsic::make(DType::F32, "exp", {fimm(1.0)})),
       Evaluate::make(Intrinsic::make(DType::F32, "log", {fimm(1.0)}))},
      {Evaluate::make(Intrinsic::make(DType::F32, "exp", {fimm(1.0)})),
       Evaluate::make(Intrinsic::make(DType::F64, "exp", {fimm(1.0)}))},
      {LocalDecl::make("t", DType::F32, false, fimm(0.0)),
       LocalDecl::make("t", DType::F32, true, fimm(0.0))},
      {LocalDecl::make("t", DType::F32, false, fimm(0.0)),
       LocalDecl::make("u", DType::F32, false, fimm(0.0))},
      {Assign::make("t", fimm(0.0)), Assign::make("t", fimm(1.0))},
      {Alloc::make("s", DType::F32, {64}, MemoryScope::Local),
       Alloc::make("s", DType::F32, {64}, MemoryScope::Shared)},
      {Alloc::make("s", DType::F32, {64}, MemoryScope::Local),
       Alloc::make("s", DType::F32, {32}, MemoryScope::Local)},
      {Store::make("y", {idx(0)}, FloatImm::make(DType::F32, 1.0)),
       Store::make("y", {idx(0)}, Cast::make(DType::F32, IntImm::make(DType::I32, 1)))},
      {Store::make("y", {idx(0)}, Cast::make(DType::F32, IntImm::make(DType::I32, 1))),
       Store::make("y", {idx(0)}, Cast::make(DType::F32, IntImm::make(DType::I64, 1)))},
      {Store::make("y", {idx(0)}, Cast::make(DType::F32, LocalRef::make(DType::I32, "t"))),
       Store::make("y", {idx(0)}, Cast::make(DType::F32, LocalRef::make(DType::I32, "u")))},
      {Store::make("y", {idx(0)}, bin(BinaryOp::Sub, fimm(1.0), fimm(2.0))),
       Store::make("y", {idx(0)}, bin(BinaryOp::Sub, fimm(2.0), fimm(1.0)))},
      {Store::make("y", {idx(0)}, bin(BinaryOp::Min, fimm(1.0), fimm(2.0))),
       Store::make("y", {idx(0)}, bin(BinaryOp::Max, fimm(1.0), fimm(2.0)))},
  };
  for (const auto& [x, y] : different) {
    EXPECT_TRUE(equal(with_body(x), with_body(x)));
    EXPECT_TRUE(unequal(with_body(x), with_body(y)));
  }
  // Buffers: names, dtypes and shapes all count.
  Stmt s = Store::make("y", {idx(0)}, fimm(1.0));
  Module base = module_of(prim("p", {buffer("a", {4})}, {buffer("y", {4})}, s));
  EXPECT_TRUE(
      unequal(base, module_of(prim("p", {buffer("a", {4}, DType::F16)}, {buffer("y", {4})}, s))));
  EXPECT_TRUE(unequal(base, module_of(prim("p", {buffer("a", {5})}, {buffer("y", {4})}, s))));
  EXPECT_TRUE(unequal(base, module_of(prim("q", {buffer("a", {4})}, {buffer("y", {4})}, s))));
  EXPECT_TRUE(unequal(base, module_of(prim("p", {buffer("a", {4})}, {buffer("y", {4})}, s,
                                           {symbolic::le(1, sym("n"))}))));
}

TEST(StructuralEqualTest, IndexArithmeticComparesAsItsIndexForm) {
  // `y[i + 1] = 1.0` reads back with one Index, however the index was built.
  auto store_at = [](PrimExpr index) {
    return module_of(prim("p", {}, {buffer("y", {sym("n")})},
                          For::make("i", 0, sym("n") - 1, ForKind::Serial,
                                    Store::make("y", {std::move(index)}, fimm(1.0)))));
  };
  PrimExpr i = idx(sym("i"));
  PrimExpr one = IntImm::make(DType::I64, 1);
  EXPECT_TRUE(equal(store_at(idx(sym("i") + 1)), store_at(bin(BinaryOp::Add, i, idx(1)))));
  EXPECT_TRUE(equal(store_at(idx(sym("i") + 1)), store_at(bin(BinaryOp::Add, i, one))));
  EXPECT_TRUE(equal(store_at(idx(1)), store_at(one)));
  EXPECT_TRUE(
      equal(store_at(idx(symbolic::max(sym("i"), 2))), store_at(bin(BinaryOp::Max, i, idx(2)))));
  EXPECT_TRUE(equal(store_at(idx(symbolic::floordiv(sym("i"), 2))),
                    store_at(bin(BinaryOp::Div, i, idx(2)))));
  EXPECT_TRUE(
      equal(store_at(idx(-1 * sym("i"))), store_at(Intrinsic::make(DType::I64, "neg", {i}))));
  EXPECT_TRUE(unequal(store_at(idx(sym("i") + 1)), store_at(bin(BinaryOp::Add, one, i))));
  EXPECT_TRUE(unequal(store_at(idx(1)), store_at(IntImm::make(DType::I32, 1))));
  // Other integer expressions compare node by node.
  PrimExpr local = LocalRef::make(DType::I64, "k");
  EXPECT_TRUE(
      equal(store_at(bin(BinaryOp::Add, local, idx(1))), store_at(bin(BinaryOp::Add, local, one))));
  EXPECT_TRUE(unequal(store_at(bin(BinaryOp::Add, local, idx(1))),
                      store_at(bin(BinaryOp::Add, local, idx(2)))));
}

TEST(StructuralEqualTest, Externs) {
  auto make = [](const std::string& symbol, DType dtype, const std::string& pname) {
    Module m;
    m.add(extern_fn("sgemm",
                    {var(pname, Type::tensor(dtype, {sym("m"), sym("k")})),
                     var("b", Type::tensor(dtype, {sym("k"), sym("n")}))},
                    Type::tensor(dtype, {sym("m"), sym("n")}), symbol));
    return m;
  };
  EXPECT_TRUE(equal(make("blas.sgemm", DType::F32, "a"), make("blas.sgemm", DType::F32, "a")));
  EXPECT_TRUE(unequal(make("blas.sgemm", DType::F32, "a"), make("blas.dgemm", DType::F32, "a")));
  EXPECT_TRUE(unequal(make("blas.sgemm", DType::F32, "a"), make("blas.sgemm", DType::F64, "a")));
  EXPECT_TRUE(unequal(make("blas.sgemm", DType::F32, "a"), make("blas.sgemm", DType::F32, "c")));
  // A decl of another kind with the same name differs.
  Module fn_module = module_of(function("sgemm", {}, Type::unknown(), block({}, lit(int64_t{0}))));
  EXPECT_TRUE(unequal(make("blas.sgemm", DType::F32, "a"), fn_module));
}

TEST(StructuralHashTest, HashesSeparateCommonDifferences) {
  // Not guaranteed for every pair, but these must not all collide.
  std::vector<Module> modules;
  modules.push_back(build({}));
  Spec s1;
  s1.callee = "add";
  modules.push_back(build(s1));
  Spec s2;
  s2.dim = sym("S");
  modules.push_back(build(s2));
  Spec s3;
  s3.axis = 2;
  modules.push_back(build(s3));
  Spec s4;
  s4.swap_args = true;
  modules.push_back(build(s4));
  modules.push_back(module_of(add_relu()));
  modules.push_back(module_of(add_relu(ForKind::Serial)));
  for (size_t i = 0; i < modules.size(); ++i)
    for (size_t j = i + 1; j < modules.size(); ++j)
      EXPECT_NE(structural_hash(modules[i]), structural_hash(modules[j])) << i << " vs " << j;
}

TEST(StructuralHashTest, AlphaRenamingKeepsTheHash) {
  Spec renamed;
  renamed.y = "p";
  renamed.z = "q";
  EXPECT_EQ(structural_hash(build({})), structural_hash(build(renamed)));
  EXPECT_EQ(structural_hash(module_of(add_relu())),
            structural_hash(module_of(add_relu(ForKind::Parallel, 0.0, "y", false))));
}

} // namespace
} // namespace dsc::ir
