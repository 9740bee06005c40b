#include "ir/Verifier.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "symbolic/Expr.h"
#include "tests/unit/ir/IRBuilders.h"

namespace dsc::ir {
namespace {

using symbolic::sym;
using namespace test;

std::string join(const std::vector<std::string>& errors) {
  std::string s;
  for (const std::string& e : errors)
    s += "  " + e + "\n";
  return s;
}

// Exactly one error, and it contains `needle`.
::testing::AssertionResult one_error(const Module& m, const std::string& needle,
                                     const VerifyOptions& options = {}) {
  std::vector<std::string> errors = verify(m, options);
  if (errors.size() != 1)
    return ::testing::AssertionFailure() << errors.size() << " errors:\n" << join(errors);
  if (errors[0].find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "'" << errors[0] << "' lacks '" << needle << "'";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult clean(const Module& m, const VerifyOptions& options = {}) {
  std::vector<std::string> errors = verify(m, options);
  if (!errors.empty()) return ::testing::AssertionFailure() << join(errors);
  return ::testing::AssertionSuccess();
}

Module module_of(Ref<Function> f) {
  Module m;
  m.add(std::move(f));
  return m;
}
Module module_of(Ref<PrimFunc> p) {
  Module m;
  m.add(std::move(p));
  return m;
}

VerifyOptions typed() {
  VerifyOptions o;
  o.require_types = true;
  return o;
}

// ---------------------------------------------------------------- graph functions

// A fully typed function using every graph construct.
Module valid_function() {
  Type t = f32({sym("B"), 6});
  Type part = f32({sym("B"), 2});
  VarRef c = var("c", Type::scalar(DType::Bool));
  VarRef x = var("x", t);
  VarRef axis = var("axis", Type::of_kind(Type::Kind::Int));
  VarRef q = var("q", part), k = var("k", part), v = var("v", part);
  VarRef n = var("n", Type::tensor(DType::I64, {sym("N"), 2}));
  VarRef u = var("u", part);
  Type parts = Type::tuple({part, part, part});
  Expr split = Call::make("split", {x, lit(int64_t{3})}, {kw("axis", axis)}, parts);
  Expr exp_q = Call::make("exp", {q}, {}, part);
  Expr sum = Call::make(
      "add", {GetItem::make(Tuple::make({k, v}, Type::tuple({part, part})), 1, part), u}, {}, part);
  Expr branch = If::make(c, block({let(u, exp_q)}, sum), block({}, k), part);
  Binding asserted{
      {n}, Call::make("nonzero", {x}, {}, Type::tensor(DType::I64, {sym("N"), 2})), true, {}};
  Expr body = block({Binding{{q, k, v}, split, false, {}}, asserted}, branch);
  return module_of(function("f", {c, x, axis}, part, body, {symbolic::le(1, sym("B"))},
                            {Expr(), Expr(), lit(int64_t{-1})}));
}

TEST(VerifierTest, ValidFunctionPasses) {
  EXPECT_TRUE(clean(valid_function()));
  EXPECT_TRUE(clean(valid_function(), typed()));
}

TEST(VerifierTest, VarUsedBeforeItIsBound) {
  VarRef x = var("x", f32({4})), y = var("y"), z = var("z");
  Expr body = block({let(y, call("exp", {z})), let(z, call("exp", {x}))}, y);
  EXPECT_TRUE(one_error(module_of(function("f", {x}, Type::unknown(), body)),
                        "fn f: var 'z' is used before it is bound"));
}

TEST(VerifierTest, FreeVar) {
  VarRef x = var("x", f32({4})), w = var("w");
  EXPECT_TRUE(
      one_error(module_of(function("f", {x}, Type::unknown(), block({}, call("add", {x, w})))),
                "var 'w' is used but never bound"));
}

TEST(VerifierTest, VarUsedOutsideItsScope) {
  VarRef c = var("c", Type::scalar(DType::Bool)), x = var("x", f32({4}));
  VarRef t = var("t"), r = var("r");
  Expr branch = If::make(c, block({let(t, call("exp", {x}))}, t), block({}, x));
  Expr body = block({let(r, branch)}, call("add", {r, t}));
  EXPECT_TRUE(one_error(module_of(function("f", {c, x}, Type::unknown(), body)),
                        "var 't' is used outside the scope that binds it"));
}

TEST(VerifierTest, VarBoundTwice) {
  VarRef x = var("x", f32({4})), y = var("y");
  Expr body = block({let(y, call("exp", {x})), let(y, call("exp", {y}))}, y);
  EXPECT_TRUE(
      one_error(module_of(function("f", {x}, Type::unknown(), body)), "var 'y' is bound twice"));
  Expr rebinds_param = block({let(x, call("exp", {x}))}, x);
  EXPECT_TRUE(one_error(module_of(function("g", {x}, Type::unknown(), rebinds_param)),
                        "var 'x' is bound twice"));
  EXPECT_TRUE(one_error(module_of(function("h", {x, x}, Type::unknown(), block({}, x))),
                        "var 'x' is bound twice"));
}

TEST(VerifierTest, DestructuringArity) {
  VarRef x = var("x", f32({6}));
  VarRef a = var("a"), b = var("b");
  Type three = Type::tuple({f32({2}), f32({2}), f32({2})});
  Expr typed_split = Call::make("split", {x, lit(int64_t{3})}, {}, three);
  EXPECT_TRUE(one_error(module_of(function("f", {x}, Type::unknown(),
                                           block({Binding{{a, b}, typed_split, false, {}}}, a))),
                        "binding 2 vars to a tuple of 3"));
  VarRef a2 = var("a"), b2 = var("b");
  EXPECT_TRUE(one_error(
      module_of(function("g", {x}, Type::unknown(),
                         block({Binding{{a2, b2}, Tuple::make({x, x, x}), false, {}}}, a2))),
      "binding 2 vars to a tuple of 3"));
  VarRef a3 = var("a"), b3 = var("b");
  EXPECT_TRUE(one_error(
      module_of(function(
          "h", {x}, Type::unknown(),
          block({Binding{{a3, b3}, Call::make("exp", {x}, {}, f32({6})), false, {}}}, a3))),
      "binding 2 vars to a value of type f32[6]"));
  // Before inference the arity of a call's result is unknown and not checked.
  VarRef a4 = var("a"), b4 = var("b");
  EXPECT_TRUE(clean(module_of(
      function("k", {x}, Type::unknown(),
               block({Binding{{a4, b4}, call("split", {x, lit(int64_t{2})}), false, {}}}, a4)))));
}

TEST(VerifierTest, TypesRequiredAfterInference) {
  VarRef x = var("x", f32({4})), y = var("y");
  Module m = module_of(function("f", {x}, Type::unknown(), block({let(y, call("exp", {x}))}, y)));
  EXPECT_TRUE(clean(m));
  std::vector<std::string> errors = verify(m, typed());
  // The call, the var it binds, and the Block whose type is its result's.
  ASSERT_EQ(errors.size(), 3u) << join(errors);
  EXPECT_NE(errors[0].find("Call has no type: exp(x)"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("var 'y' has no type"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("Block has no type"), std::string::npos) << errors[2];
}

TEST(VerifierTest, ParametersAndDefaults) {
  VarRef untyped = var("x");
  EXPECT_TRUE(one_error(module_of(function("f", {untyped}, Type::unknown(), block({}, untyped))),
                        "parameter 'x' has no type"));
  VarRef x = var("x", f32({4}));
  VarRef axis = var("axis", Type::of_kind(Type::Kind::Int));
  EXPECT_TRUE(
      one_error(module_of(function("g", {x, axis}, Type::unknown(), block({}, x), {}, {Expr()})),
                "1 defaults for 2 parameters"));
  EXPECT_TRUE(one_error(module_of(function("h", {x, axis}, Type::unknown(), block({}, x), {},
                                           {lit(int64_t{0}), Expr()})),
                        "parameter 'x' has a default but is neither an attribute nor generic"));
  EXPECT_TRUE(one_error(module_of(function("k", {x, axis}, Type::unknown(), block({}, x), {},
                                           {Expr(), call("neg", {lit(int64_t{1})})})),
                        "the default of 'axis' is not a literal: -(1)"));
}

TEST(VerifierTest, BodyMustBeABlock) {
  VarRef x = var("x", f32({4}));
  EXPECT_TRUE(one_error(module_of(function("f", {x}, Type::unknown(), call("exp", {x}))),
                        "the body is not a Block"));
  EXPECT_TRUE(one_error(module_of(function("g", {x}, Type::unknown(), Expr())), "no body"));
}

TEST(VerifierTest, GetItemAndIfConditions) {
  VarRef x = var("x", f32({4}));
  Expr pair = Tuple::make({x, x}, Type::tuple({f32({4}), f32({4})}));
  EXPECT_TRUE(
      one_error(module_of(function("f", {x}, Type::unknown(), block({}, GetItem::make(pair, 2)))),
                "index 2 of a tuple of 2"));
  Expr branch = If::make(x, block({}, x), block({}, x), f32({4}));
  Module m = module_of(function("g", {x}, f32({4}), block({}, branch)));
  EXPECT_TRUE(clean(m));
  EXPECT_TRUE(one_error(m, "the condition of an if is f32[4], not bool[]", typed()));
}

TEST(VerifierTest, RepeatedKeywordAndAssertedTypes) {
  VarRef x = var("x", f32({4}));
  Expr c = call("sum", {x}, {kw("axis", lit(int64_t{0})), kw("axis", lit(int64_t{0}))});
  EXPECT_TRUE(one_error(module_of(function("f", {x}, Type::unknown(), block({}, c))),
                        "keyword 'axis' is given twice to sum"));
  VarRef y = var("y");
  Binding asserted{{y}, call("exp", {x}), true, {}};
  EXPECT_TRUE(one_error(module_of(function("g", {x}, Type::unknown(), block({asserted}, y))),
                        "the asserted type of 'y' is ?, not a tensor type"));
}

// ---------------------------------------------------------------- prims

Ref<PrimFunc> prim_with(Stmt body) {
  return prim("p", {buffer("a", {sym("n"), 4}), buffer("idx", {sym("n")}, DType::I64)},
              {buffer("y", {sym("n")})}, std::move(body), {symbolic::le(1, sym("m"))});
}

TEST(VerifierTest, ValidPrimPasses) {
  PrimExpr i = idx(sym("i")), acc = LocalRef::make(DType::F32, "acc");
  Stmt inner =
      For::make("j", 0, 4, ForKind::Vectorized,
                Assign::make("acc", bin(BinaryOp::Add, acc, load("a", {i, idx(sym("j"))}))));
  Stmt body = For::make(
      "i", 0, sym("n"), ForKind::Parallel,
      Seq::make({LocalDecl::make("acc", DType::F32, true, fimm(0.0)),
                 Alloc::make("t", DType::F32, {4}, MemoryScope::Local), inner,
                 Store::make("t", {idx(0)}, acc),
                 IfStmt::make(bin(BinaryOp::LT, load("idx", {i}, DType::I64), idx(0)),
                              Store::make("y", {i}, load("t", {idx(0)})),
                              Store::make("y", {i}, Intrinsic::make(DType::F32, "exp", {acc}))),
                 Evaluate::make(Intrinsic::make(DType::I32, "barrier", {}))}));
  EXPECT_TRUE(clean(module_of(prim_with(body))));
  // Sibling scopes may reuse names.
  Stmt siblings = Seq::make(
      {For::make("i", 0, 2, ForKind::Serial, LocalDecl::make("t", DType::F32, false, fimm(0.0))),
       For::make("i", 0, 2, ForKind::Serial, LocalDecl::make("t", DType::F32, false, fimm(0.0)))});
  EXPECT_TRUE(clean(module_of(prim_with(siblings))));
}

TEST(VerifierTest, UndeclaredBuffers) {
  EXPECT_TRUE(one_error(module_of(prim_with(Store::make("z", {idx(0)}, fimm(1.0)))),
                        "prim p: store to undeclared buffer 'z'"));
  EXPECT_TRUE(one_error(module_of(prim_with(Store::make("y", {idx(0)}, load("b", {idx(0)})))),
                        "load from undeclared buffer 'b'"));
  // An alloc lives until the end of its enclosing Seq.
  Stmt scoped =
      Seq::make({For::make("i", 0, 2, ForKind::Serial,
                           Seq::make({Alloc::make("t", DType::F32, {2}, MemoryScope::Local)})),
                 Store::make("t", {idx(0)}, fimm(1.0))});
  EXPECT_TRUE(one_error(module_of(prim_with(scoped)), "store to undeclared buffer 't'"));
}

TEST(VerifierTest, BufferRanksAndDtypes) {
  EXPECT_TRUE(one_error(module_of(prim_with(Store::make("y", {idx(0), idx(0)}, fimm(1.0)))),
                        "store to 'y' with 2 indices; its rank is 1"));
  EXPECT_TRUE(one_error(module_of(prim_with(Store::make("y", {idx(0)}, load("a", {idx(0)})))),
                        "load from 'a' with 1 indices; its rank is 2"));
  EXPECT_TRUE(
      one_error(module_of(prim_with(Store::make("y", {idx(0)}, FloatImm::make(DType::F16, 1.0)))),
                "storing f16 to f32 buffer 'y'"));
  EXPECT_TRUE(one_error(module_of(prim_with(Store::make("y", {idx(0)}, load("idx", {idx(0)})))),
                        "a f32 load from i64 buffer 'idx'"));
}

TEST(VerifierTest, Locals) {
  EXPECT_TRUE(
      one_error(module_of(prim_with(Store::make("y", {idx(0)}, LocalRef::make(DType::F32, "t")))),
                "use of undeclared local 't'"));
  EXPECT_TRUE(one_error(module_of(prim_with(Assign::make("t", fimm(1.0)))),
                        "assignment to undeclared local 't'"));
  Stmt assign_let =
      Seq::make({LocalDecl::make("t", DType::F32, false, fimm(0.0)), Assign::make("t", fimm(1.0))});
  EXPECT_TRUE(one_error(module_of(prim_with(assign_let)),
                        "assignment to 't', which is a `let`, not a `var`"));
  Stmt assign_dtype = Seq::make({LocalDecl::make("t", DType::F32, true, fimm(0.0)),
                                 Assign::make("t", FloatImm::make(DType::F64, 1.0))});
  EXPECT_TRUE(one_error(module_of(prim_with(assign_dtype)), "assigning f64 to f32 local 't'"));
  Stmt twice = Seq::make(
      {LocalDecl::make("t", DType::F32, true, fimm(0.0)),
       For::make("i", 0, 2, ForKind::Serial, LocalDecl::make("t", DType::F32, true, fimm(0.0)))});
  EXPECT_TRUE(one_error(module_of(prim_with(twice)), "local 't' is declared twice"));
  Stmt read_dtype = Seq::make(
      {LocalDecl::make("t", DType::F32, false, fimm(0.0)),
       Store::make("y", {idx(0)}, Cast::make(DType::F32, LocalRef::make(DType::F16, "t")))});
  EXPECT_TRUE(one_error(module_of(prim_with(read_dtype)), "local 't' is f32 but read as f16"));
  // A local goes out of scope with its Seq.
  Stmt out_of_scope =
      Seq::make({IfStmt::make(bin(BinaryOp::LT, idx(sym("n")), idx(2)),
                              LocalDecl::make("t", DType::F32, false, fimm(0.0)), Stmt()),
                 Store::make("y", {idx(0)}, LocalRef::make(DType::F32, "t"))});
  EXPECT_TRUE(one_error(module_of(prim_with(out_of_scope)), "use of undeclared local 't'"));
}

TEST(VerifierTest, LoopVariablesDoNotShadow) {
  Stmt nested = For::make(
      "i", 0, 2, ForKind::Serial,
      For::make("i", 0, 2, ForKind::Serial, Store::make("y", {idx(sym("i"))}, fimm(0.0))));
  EXPECT_TRUE(
      one_error(module_of(prim_with(nested)), "loop variable 'i' shadows an enclosing loop's"));
  Stmt over_shape = For::make("n", 0, 2, ForKind::Serial, Store::make("y", {idx(0)}, fimm(0.0)));
  EXPECT_TRUE(one_error(module_of(prim_with(over_shape)),
                        "loop variable 'n' shadows a symbol of the signature"));
  Stmt over_where = For::make("m", 0, 2, ForKind::Serial, Store::make("y", {idx(0)}, fimm(0.0)));
  EXPECT_TRUE(one_error(module_of(prim_with(over_where)),
                        "loop variable 'm' shadows a symbol of the signature"));
}

TEST(VerifierTest, DuplicateBuffersAndEvaluate) {
  EXPECT_TRUE(one_error(module_of(prim_with(Alloc::make("a", DType::F32, {2}, MemoryScope::Local))),
                        "buffer 'a' is declared twice"));
  EXPECT_TRUE(one_error(module_of(prim("q", {buffer("a", {2})}, {buffer("a", {2})},
                                       Store::make("a", {idx(0)}, fimm(0.0)))),
                        "buffer 'a' is declared twice"));
  EXPECT_TRUE(one_error(module_of(prim_with(Evaluate::make(fimm(1.0)))),
                        "Evaluate of a non-intrinsic: 1.0"));
  EXPECT_TRUE(one_error(module_of(prim("r", {}, {}, Stmt())), "prim r: no body"));
}

// ---------------------------------------------------------------- modules and externs

TEST(VerifierTest, ModuleLevel) {
  Module m = valid_function();
  m.add(valid_function().decls[0].fn);
  EXPECT_TRUE(one_error(m, "module: 'f' is declared twice"));
  Module imports;
  imports.imports = {Import{"nn", {}, nullptr}, Import{"nn", {}, nullptr}};
  EXPECT_TRUE(one_error(imports, "module: 'import nn' twice"));
  Module empty_decl;
  empty_decl.decls.push_back(Module::Decl{});
  EXPECT_TRUE(one_error(empty_decl, "a declaration with 0 definitions instead of one"));
}

TEST(VerifierTest, Externs) {
  Module good;
  good.add(extern_fn("sgemm",
                     {var("a", f32({sym("m"), sym("k")})), var("b", f32({sym("k"), sym("n")}))},
                     f32({sym("m"), sym("n")}), "blas.sgemm"));
  EXPECT_TRUE(clean(good));
  Module no_symbol;
  no_symbol.add(extern_fn("e", {var("a", f32({4}))}, f32({4}), ""));
  EXPECT_TRUE(one_error(no_symbol, "extern e: no library symbol"));
  Module untyped;
  untyped.add(extern_fn("e", {var("a")}, f32({4}), "lib.e"));
  EXPECT_TRUE(one_error(untyped, "parameter 'a' has no type"));
  // A routine's attributes are the ones its table names, in its order.
  auto conv = [](std::vector<RoutineAttribute> attributes) {
    Module m;
    m.add(extern_fn("conv", {var("x", f32({1, 1, 5, 5})), var("w", f32({1, 1, 3, 3}))},
                    f32({1, 1, 3, 3}), "cudnn.conv2d", std::move(attributes)));
    return m;
  };
  EXPECT_TRUE(clean(
      conv({{"stride", {1, 1}}, {"padding", {0, 0}}, {"dilation", {1, 1}}, {"groups", {1}}})));
  EXPECT_TRUE(
      one_error(conv({{"stride", {1, 1}}}),
                "extern conv: routine \"cudnn.conv2d\" takes the attributes stride, padding, "
                "dilation and groups, but the extern gives the attribute stride"));
  Module extra;
  extra.add(extern_fn("e", {var("a", f32({4}))}, f32({4}), "lib.e", {{"k", {1}}}));
  EXPECT_TRUE(one_error(extra, "extern e: routine \"lib.e\" takes no attributes, but the extern "
                               "gives the attribute k"));
}

} // namespace
} // namespace dsc::ir
