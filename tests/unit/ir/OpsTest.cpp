// The shape rules of every primitive op (ir/ops/*.cpp), through find_op, bind_arguments and
// OpDef::infer, with symbolic dims, run-time facts and every kind of error.

#include <gtest/gtest.h>

#include "ir/OpRegistry.h"
#include "symbolic/Parser.h"
#include "symbolic/Printer.h"
#include "tests/unit/ir/TypeText.h"

namespace dsc::ir {
namespace {

namespace sym = symbolic;

using dsc::testing::dim;
using dsc::testing::type;

class OpsTest : public ::testing::Test {
protected:
  Expr t(const std::string& text, const std::string& name = "x") {
    return Expr(Var::make(name, type(text), loc(++col_)));
  }
  Expr shape(const std::vector<std::string>& dims) {
    std::vector<sym::Expr> ds;
    for (const std::string& d : dims)
      ds.push_back(dim(d));
    return ShapeExpr::make(std::move(ds), loc(++col_));
  }
  static Expr lit(int64_t v) { return Literal::make(v); }
  static Expr lit(double v) { return Literal::make(v); }
  static Expr lit(bool v) { return Literal::make(v); }
  static Expr str(const std::string& s) { return StringImm::make(s); }
  static KeywordArg kw(const std::string& name, Expr value) { return {name, value, {}}; }
  SourceLoc loc(uint32_t c) { return SourceLoc{file_, 1, c}; }

  // The result type as text, or "error: <first message>".
  std::string infer(const std::string& op, std::vector<Expr> args,
                    std::vector<KeywordArg> kwargs = {}) {
    diags_.clear();
    const OpDef* def = find_op(op);
    if (!def) return "no such op";
    Expr call = Call::make(op, args, kwargs, Type::unknown(), loc(1));
    const Call& c = *call.as<Call>();
    std::vector<Type> arg_types, kwarg_types;
    for (const Expr& a : c.args)
      arg_types.push_back(a->type);
    for (const KeywordArg& k : c.kwargs)
      kwarg_types.push_back(k.value->type);
    std::optional<BoundArgs> bound = bind_arguments(*def, c, arg_types, kwarg_types, diags_);
    std::optional<Type> result;
    if (bound) result = def->infer(c, *bound, ctx_);
    if (diags_.has_errors()) {
      EXPECT_FALSE(result.has_value()) << "an error was reported but a type returned";
      return "error: " + diags_.diagnostics()[0].message;
    }
    EXPECT_TRUE(result.has_value()) << "no type and no error";
    return result ? to_string(*result) : "?";
  }

  const Diagnostic& diag() { return diags_.diagnostics().at(0); }

  // The recorded run-time facts, as "predicate (what)" (facts already proved are recorded too,
  // for --emit=facts, and left out here).
  std::vector<std::string> facts() {
    std::vector<std::string> out;
    for (const ShapeFact& f : recorded_)
      if (f.status != ShapeFact::Status::Proved)
        out.push_back(sym::to_string(f.predicate) + " (" + f.what + ")");
    return out;
  }

  void assume(const std::string& pred) { facts_.add(sym::parse_predicate(pred).expr); }

  SourceManager sources_;
  uint32_t file_ = sources_.add("test.dsc", std::string(200, ' '));
  DiagnosticEngine diags_{sources_};
  sym::Prover prover_;
  sym::Facts facts_;
  std::vector<ShapeFact> recorded_;
  ShapeContext ctx_{diags_, facts_, prover_, recorded_};
  uint32_t col_ = 10;
};

using Strings = std::vector<std::string>;

// ---------------------------------------------------------------- registry and binding

// Every row of ir/Ops.def has a definition, found by its name and by its id, and nothing else
// is registered.
TEST_F(OpsTest, EveryOpOfTheTableIsRegistered) {
  size_t rows = 0;
#define DSC_OP(op, family, pattern, result)                                                        \
  ++rows;                                                                                          \
  EXPECT_EQ(find_op(#op), &op_def(OpId::op)) << #op;                                               \
  EXPECT_STREQ(op_def(OpId::op).name, #op);
#include "ir/Ops.def"
  EXPECT_EQ(all_ops().size(), rows);
  EXPECT_EQ(find_op("softmax"), nullptr);
}

TEST_F(OpsTest, BindingErrors) {
  EXPECT_EQ(infer("add", {t("f32[2]"), t("f32[2]"), t("f32[2]")}),
            "error: add takes 2 arguments, got 3");
  EXPECT_EQ(infer("add", {t("f32[2]")}), "error: add: missing argument 'b'");
  EXPECT_EQ(infer("sum", {t("f32[2]")}, {kw("axes", lit(int64_t{0}))}),
            "error: sum has no parameter 'axes'");
  ASSERT_EQ(diag().notes.size(), 1u);
  EXPECT_EQ(diag().notes[0].message, "did you mean 'axis'?");
  EXPECT_EQ(infer("sum", {t("f32[2]"), lit(int64_t{0})}, {kw("axis", lit(int64_t{0}))}),
            "error: sum: argument 'axis' given twice");
  EXPECT_EQ(infer("reshape", {t("f32[2]"), lit(int64_t{2})}),
            "error: reshape expects a list of dims for 'shape'");
  EXPECT_EQ(infer("add", {t("f32[2]"), shape({"2"})}), "error: add expects a tensor for 'b'");
  EXPECT_EQ(infer("cast", {t("f32[2]")}, {kw("dtype", str("f13"))}),
            "error: cast: unknown dtype 'f13'");
  EXPECT_EQ(diag().notes.at(0).message, "did you mean 'f16'?");
  EXPECT_EQ(infer("cast", {t("f32[2]")}, {kw("dtype", lit(int64_t{3}))}),
            "error: cast expects a dtype name such as \"f16\" for 'dtype'");
  EXPECT_EQ(infer("sum", {t("f32[2]")}, {kw("keepdims", lit(int64_t{1}))}),
            "error: sum expects true or false for 'keepdims'");
  EXPECT_EQ(infer("concat", {t("f32[2]")}),
            "error: concat expects a list of tensors for 'tensors'");
  Expr tuple_var = Expr(Var::make("t", Type::tuple({type("f32[2]")})));
  EXPECT_EQ(infer("exp", {tuple_var}),
            "error: exp expects a tensor for 'x', got a tuple (f32[2],)");
}

TEST_F(OpsTest, ErrorsPointAtTheArgument) {
  Expr a = t("f32[3, 768]"), b = t("f32[512, 4]");
  Expr e = Call::make("exp", {b}, {}, b->type, loc(77));
  EXPECT_EQ(infer("matmul", {a, e}), "error: matmul: contracted dims differ: 768 vs 512");
  EXPECT_EQ(diag().loc.col, 77u);
  EXPECT_TRUE(diag().notes.empty()); // no symbols, no counterexample
  // A Var's location is where it was bound, so errors about it point at the call.
  EXPECT_EQ(infer("matmul", {a, b}), "error: matmul: contracted dims differ: 768 vs 512");
  EXPECT_EQ(diag().loc.col, 1u);
  // Keyword arguments point at the keyword.
  EXPECT_EQ(infer("sum", {a}, {KeywordArg{"axis", lit(int64_t{2}), loc(88)}}),
            "error: sum: axis 2 is out of range for rank 2");
  EXPECT_EQ(diag().loc.col, 88u);
}

TEST_F(OpsTest, NegativeLiteralsAndListsOfLiterals) {
  Expr neg1 = Call::make("neg", {lit(int64_t{1})}, {});
  EXPECT_EQ(infer("sum", {t("f32[A, B]")}, {kw("axis", neg1)}), "f32[A]");
  Expr list = ListExpr::make({lit(int64_t{1}), lit(int64_t{0})});
  EXPECT_EQ(infer("permute", {t("f32[A, B]"), list}), "f32[B, A]");
}

// ---------------------------------------------------------------- elementwise

TEST_F(OpsTest, BroadcastingProvedAndOnes) {
  EXPECT_EQ(infer("add", {t("f32[B, S, 768]"), t("f32[768]")}), "f32[B, S, 768]");
  EXPECT_EQ(infer("mul", {t("f32[B, 1, S]"), t("f32[B, 4, 1]")}), "f32[B, 4, S]");
  EXPECT_EQ(infer("sub", {t("f32[1]"), t("f32[S]")}), "f32[S]");
  EXPECT_EQ(infer("add", {t("f32[2*S]"), t("f32[S + S]")}), "f32[2*S]");
  EXPECT_TRUE(facts().empty());
}

TEST_F(OpsTest, BroadcastingUnderFacts) {
  assume("T == S");
  EXPECT_EQ(infer("add", {t("f32[S]"), t("f32[T]")}), "f32[S]");
  assume("U == 1");
  EXPECT_EQ(infer("add", {t("f32[U]"), t("f32[K]")}), "f32[K]");
  EXPECT_TRUE(facts().empty());
}

TEST_F(OpsTest, BroadcastingRecordsRunTimeFacts) {
  EXPECT_EQ(infer("add", {t("f32[B, S]"), t("f32[B, T]")}), "f32[B, S]");
  EXPECT_EQ(facts(), (Strings{"S == T (broadcast of dim 1 of add)"}));
  // The same fact again is recorded once.
  EXPECT_EQ(infer("mul", {t("f32[S]"), t("f32[T]")}), "f32[S]");
  EXPECT_EQ(recorded_.size(), 1u);
}

TEST_F(OpsTest, BroadcastingErrors) {
  EXPECT_EQ(infer("add", {t("f32[2, 3]"), t("f32[2, 4]")}),
            "error: add: cannot broadcast dims 3 and 4");
  EXPECT_EQ(infer("add", {t("f32[S + 1]"), t("f32[S + 2]")}),
            "error: add: cannot broadcast dims S + 1 and S + 2");
  ASSERT_EQ(diag().notes.size(), 2u);
  EXPECT_NE(diag().notes[1].message.find("they can never be equal (e.g. S="), std::string::npos)
      << diag().notes[1].message;
  assume("S >= 5");
  EXPECT_EQ(infer("add", {t("f32[S]"), t("f32[4]")}), "error: add: cannot broadcast dims S and 4");
}

TEST_F(OpsTest, DTypes) {
  EXPECT_EQ(infer("add", {t("f32[2]"), t("f16[2]")}), "error: add: dtypes differ: f32 vs f16");
  EXPECT_EQ(infer("mul", {t("f16[S]"), lit(0.125)}), "f16[S]");
  EXPECT_EQ(infer("mul", {lit(int64_t{2}), t("i32[S]")}), "i32[S]");
  EXPECT_EQ(infer("mul", {t("f32[S]"), lit(int64_t{2})}), "f32[S]");
  EXPECT_EQ(infer("mul", {t("i32[S]"), lit(0.5)}),
            "error: mul: a float literal cannot take dtype i32");
  EXPECT_EQ(infer("add", {t("bool[S]"), t("bool[S]")}),
            "error: add expects numeric tensors, got bool[S]");
  EXPECT_EQ(infer("lt", {t("f32[S]"), lit(0.0)}), "bool[S]");
  EXPECT_EQ(infer("eq", {t("bool[S]"), lit(true)}), "bool[S]");
  EXPECT_EQ(infer("ge", {t("i64[S]"), t("i64[1]")}), "bool[S]");
  EXPECT_EQ(infer("logical_and", {t("bool[S]"), t("bool[S]")}), "bool[S]");
  EXPECT_EQ(infer("logical_or", {t("f32[S]"), t("f32[S]")}),
            "error: logical_or expects bool tensors, got f32[S]");
  EXPECT_EQ(infer("logical_not", {t("bool[S, 2]")}), "bool[S, 2]");
  // Two literals stay weak.
  Type w = *[&] {
    Expr call = Call::make("add", {lit(int64_t{1}), lit(2.0)}, {});
    std::optional<BoundArgs> b = bind_arguments(
        *find_op("add"), *call.as<Call>(), {lit(int64_t{1})->type, lit(2.0)->type}, {}, diags_);
    return find_op("add")->infer(*call.as<Call>(), *b, ctx_);
  }();
  EXPECT_TRUE(w.weak);
  EXPECT_EQ(to_string(w), "f32[]");
}

TEST_F(OpsTest, UnaryAndCast) {
  EXPECT_EQ(infer("exp", {t("f16[B, S]")}), "f16[B, S]");
  EXPECT_EQ(infer("sqrt", {t("i32[B]")}), "error: sqrt expects float tensors, got i32[B]");
  EXPECT_EQ(infer("abs", {t("i32[B]")}), "i32[B]");
  EXPECT_EQ(infer("neg", {t("bool[B]")}), "error: neg expects numeric tensors, got bool[B]");
  EXPECT_EQ(infer("cast", {t("f32[B, 3]")}, {kw("dtype", str("f16"))}), "f16[B, 3]");
  EXPECT_EQ(infer("cast", {t("f32[B]"), str("bool")}), "bool[B]");
  EXPECT_EQ(infer("cast", {t("f32[B]")}), "error: cast: missing argument 'dtype'");
}

TEST_F(OpsTest, Where) {
  EXPECT_EQ(infer("where", {t("bool[B, 1]"), t("f32[B, S]"), lit(0.0)}), "f32[B, S]");
  EXPECT_EQ(infer("where", {t("f32[B]"), t("f32[B]"), t("f32[B]")}),
            "error: where expects a bool condition, got f32[B]");
  EXPECT_EQ(infer("where", {t("bool[S]"), t("f32[S]"), t("i32[S]")}),
            "error: where: dtypes differ: f32 vs i32");
  EXPECT_EQ(infer("where", {t("bool[T]"), t("f32[S]"), t("f32[S]")}), "f32[T]");
  EXPECT_EQ(facts(), (Strings{"S == T (broadcast of dim 0 of where)"}));
}

// ---------------------------------------------------------------- reductions

TEST_F(OpsTest, Reductions) {
  EXPECT_EQ(infer("sum", {t("f32[B, S, D]")}, {kw("axis", lit(int64_t{1}))}), "f32[B, D]");
  EXPECT_EQ(
      infer("max", {t("f32[B, S, D]")}, {kw("axis", lit(int64_t{-1})), kw("keepdims", lit(true))}),
      "f32[B, S, 1]");
  EXPECT_EQ(infer("mean", {t("f32[B, S, D]")}, {kw("axis", shape({"1", "-1"}))}), "f32[B]");
  EXPECT_EQ(infer("min", {t("i32[B, S]")}), "i32[]");
  EXPECT_EQ(infer("sum", {t("f32[B, S]")}, {kw("keepdims", lit(true))}), "f32[1, 1]");
  EXPECT_EQ(infer("sum", {t("f32[B, S]")}, {kw("axis", lit(int64_t{3}))}),
            "error: sum: axis 3 is out of range for rank 2");
  EXPECT_EQ(infer("sum", {t("f32[B, S]")}, {kw("axis", lit(int64_t{-3}))}),
            "error: sum: axis -3 is out of range for rank 2");
  EXPECT_EQ(infer("sum", {t("f32[B, S]")}, {kw("axis", shape({"1", "-1"}))}),
            "error: sum: axis -1 appears twice");
  EXPECT_EQ(infer("mean", {t("i32[B]")}), "error: mean expects a float tensor, got i32[B]");
  EXPECT_EQ(infer("sum", {t("bool[B]")}), "error: sum expects a numeric tensor, got bool[B]");
  EXPECT_EQ(infer("sum", {t("f32[B]")}, {kw("axis", shape({"S"}))}),
            "error: sum expects integer axes, got [S]");
}

// One axis, the last by default, to i64 indices; the axis must not be empty.
TEST_F(OpsTest, ArgReductions) {
  assume("S >= 1");
  EXPECT_EQ(infer("argmax", {t("f32[B, S]")}), "i64[B]");
  EXPECT_EQ(infer("argmin", {t("i32[B, S, 7]")}, {kw("axis", lit(int64_t{1}))}), "i64[B, 7]");
  EXPECT_EQ(infer("argmax", {t("f16[B, S, 7]")},
                  {kw("axis", lit(int64_t{-2})), kw("keepdims", lit(true))}),
            "i64[B, 1, 7]");
  EXPECT_EQ(infer("argmin", {t("f32[S]")}, {kw("keepdims", lit(true))}), "i64[1]");
  EXPECT_EQ(infer("argmax", {t("f32[S]")}), "i64[]");
  EXPECT_TRUE(facts().empty());
  // An axis that may be empty is checked at run time; one that is, is an error.
  EXPECT_EQ(infer("argmax", {t("f32[S, T]")}), "i64[S]");
  EXPECT_EQ(facts(), (Strings{"1 <= T (argmax: the reduced axis (of size T) must not be empty)"}));
  EXPECT_EQ(infer("argmin", {t("f32[S, 0]")})
                .rfind("error: argmin: the reduced axis (of size 0) must not be empty", 0),
            0u);
  EXPECT_EQ(infer("argmax", {t("f32[B, S]")}, {kw("axis", lit(int64_t{2}))}),
            "error: argmax: axis 2 is out of range for rank 2");
  EXPECT_EQ(infer("argmax", {t("f32[]")}), "error: argmax: axis -1 is out of range for rank 0");
  EXPECT_EQ(infer("argmin", {t("bool[S]")}), "error: argmin expects a numeric tensor, got bool[S]");
  EXPECT_EQ(infer("argmax", {t("f32[S]")}, {kw("axis", shape({"0"}))}),
            "error: argmax expects an integer for 'axis'");
}

// ---------------------------------------------------------------- layout

TEST_F(OpsTest, Reshape) {
  EXPECT_EQ(infer("reshape", {t("f32[B, S, 768]"), shape({"B", "S", "12", "64"})}),
            "f32[B, S, 12, 64]");
  EXPECT_EQ(infer("reshape", {t("f32[B, S, 768]"), shape({"B", "S*12", "64"})}),
            "f32[B, 12*S, 64]");
  EXPECT_TRUE(facts().empty());
  EXPECT_EQ(infer("reshape", {t("f32[3, 4]"), shape({"5", "2"})}),
            "error: reshape: element counts differ: 12 vs 10");
  EXPECT_EQ(infer("reshape", {t("f32[S, 4]"), shape({"T", "4"})}), "f32[T, 4]");
  EXPECT_EQ(facts(), (Strings{"S == T (reshape: element counts)"}));
}

TEST_F(OpsTest, ReshapeInfersMinusOne) {
  EXPECT_EQ(infer("reshape", {t("f32[B, S, 768]"), shape({"B", "-1", "64"})}), "f32[B, 12*S, 64]");
  EXPECT_EQ(infer("reshape", {t("f32[B, S, 12, 64]"), shape({"B", "S", "-1"})}), "f32[B, S, 768]");
  EXPECT_EQ(infer("reshape", {t("f32[B, S]"), shape({"-1"})}), "f32[B*S]");
  EXPECT_EQ(infer("reshape", {t("f32[6, 4]"), shape({"-1", "8"})}), "f32[3, 8]");
  EXPECT_EQ(infer("reshape", {t("f32[2*N, 3]"), shape({"N", "-1"})}), "f32[N, 6]");
  EXPECT_TRUE(facts().empty());
  EXPECT_EQ(infer("reshape", {t("f32[S]"), shape({"-1", "8"})}), "f32[S/8, 8]");
  EXPECT_EQ(
      facts(),
      (Strings{
          "S%8 == 0 (reshape: the element count S must be divisible by 8 to infer the -1 dim)"}));
  EXPECT_EQ(infer("reshape", {t("f32[7, 3]"), shape({"-1", "2"})}),
            "error: reshape: the element count 21 must be divisible by 2 to infer the -1 dim");
  // Shared factors cancel, so no run-time check is left that can only fail for empty tensors.
  EXPECT_EQ(infer("reshape", {t("f32[B, S, 768]"), shape({"B", "S", "13", "-1"})}),
            "error: reshape: the element count 768*B*S must be divisible by 13*B*S to infer the "
            "-1 dim");
  EXPECT_EQ(infer("reshape", {t("f32[8]"), shape({"-1", "-1"})}),
            "error: reshape: only one dim may be -1, got [-1, -1]");
  EXPECT_EQ(infer("reshape", {t("f32[8]"), shape({"-2", "-4"})}),
            "error: reshape: dim -2 is negative");
}

TEST_F(OpsTest, ReshapeNegativeDimFact) {
  // Written dims are dims: S - 1 must not be negative.
  EXPECT_EQ(infer("reshape", {t("f32[S - 1, 2]"), shape({"2", "S - 1"})}), "f32[2, S - 1]");
  EXPECT_EQ(facts(), (Strings{"1 <= S (reshape: dim S - 1 must be >= 0)"}));
}

TEST_F(OpsTest, Permute) {
  EXPECT_EQ(infer("permute", {t("f32[B, S, 12, 64]"), shape({"0", "2", "1", "3"})}),
            "f32[B, 12, S, 64]");
  EXPECT_EQ(infer("permute", {t("f32[A, B, C]"), shape({"0", "-1", "1"})}), "f32[A, C, B]");
  EXPECT_EQ(infer("permute", {t("f32[A, B, C]"), shape({"0", "0", "1"})}),
            "error: permute expects a permutation of the 3 axes, got [0, 0, 1]");
  EXPECT_EQ(infer("permute", {t("f32[A, B, C]"), shape({"0", "1"})}),
            "error: permute expects a permutation of the 3 axes, got [0, 1]");
  EXPECT_EQ(infer("permute", {t("f32[A, B]"), shape({"0", "5"})}),
            "error: permute: axis 5 is out of range for rank 2");
}

TEST_F(OpsTest, BroadcastTo) {
  EXPECT_EQ(infer("broadcast_to", {t("f32[1, S]"), shape({"B", "4", "S"})}), "f32[B, 4, S]");
  EXPECT_EQ(infer("broadcast_to", {t("f32[3]"), shape({"B", "4"})}),
            "error: broadcast_to: cannot broadcast dim 3 to 4");
  EXPECT_EQ(infer("broadcast_to", {t("f32[A, B]"), shape({"4"})}),
            "error: broadcast_to: cannot broadcast rank 2 to rank 1");
  EXPECT_EQ(infer("broadcast_to", {t("f32[T]"), shape({"S"})}), "f32[S]");
  EXPECT_EQ(facts(), (Strings{"S == T (broadcast_to: dim 0)"}));
}

TEST_F(OpsTest, Concat) {
  Expr list = ListExpr::make({t("f32[B, S, 64]"), t("f32[B, T, 64]"), t("f32[B, 1, 64]")});
  EXPECT_EQ(infer("concat", {list}, {kw("axis", lit(int64_t{1}))}), "f32[B, S + T + 1, 64]");
  EXPECT_TRUE(facts().empty());
  Expr bad = ListExpr::make({t("f32[2, 3]"), t("f32[4, 3]")});
  EXPECT_EQ(infer("concat", {bad}, {kw("axis", lit(int64_t{1}))}),
            "error: concat: dim 0 of the inputs differ: 2 vs 4");
  EXPECT_EQ(infer("concat", {ListExpr::make({t("f32[2]"), t("f16[2]")})}),
            "error: concat: dtypes differ: f32 vs f16");
  EXPECT_EQ(infer("concat", {ListExpr::make({t("f32[2]"), t("f32[2, 2]")})}),
            "error: concat: ranks differ: f32[2] vs f32[2, 2]");
  EXPECT_EQ(infer("concat", {ListExpr::make({})}), "error: concat expects at least one tensor");
  EXPECT_EQ(infer("concat", {ListExpr::make({t("f32[2]")})}, {kw("axis", lit(int64_t{1}))}),
            "error: concat: axis 1 is out of range for rank 1");
  Expr sym_list = ListExpr::make({t("f32[A, S]"), t("f32[B, T]")});
  EXPECT_EQ(infer("concat", {sym_list}, {kw("axis", lit(int64_t{-1}))}), "f32[A, S + T]");
  EXPECT_EQ(facts(), (Strings{"A == B (concat: dim 0 of the inputs)"}));
}

TEST_F(OpsTest, SplitByCount) {
  EXPECT_EQ(infer("split", {t("f32[B, S, 2304]"), lit(int64_t{3})}, {kw("axis", lit(int64_t{-1}))}),
            "(f32[B, S, 768], f32[B, S, 768], f32[B, S, 768])");
  EXPECT_EQ(infer("split", {t("f32[4*S]"), lit(int64_t{2})}), "(f32[2*S], f32[2*S])");
  EXPECT_TRUE(facts().empty());
  EXPECT_EQ(infer("split", {t("f32[10]"), lit(int64_t{3})}),
            "error: split: dim 10 must be divisible by 3");
  EXPECT_EQ(infer("split", {t("f32[S]"), lit(int64_t{2})}), "(f32[S/2], f32[S/2])");
  EXPECT_EQ(facts(), (Strings{"S%2 == 0 (split: dim S must be divisible by 2)"}));
  EXPECT_EQ(infer("split", {t("f32[S]"), lit(int64_t{0})}),
            "error: split: the number of pieces must be between 1 and 65536, got 0");
  EXPECT_EQ(infer("split", {t("f32[S]"), lit(int64_t{1} << 40)}),
            "error: split: the number of pieces must be between 1 and 65536, got 1099511627776");
  EXPECT_EQ(infer("split", {t("f32[]"), lit(int64_t{2})}),
            "error: split expects a tensor of rank >= 1, got f32[]");
}

TEST_F(OpsTest, SplitBySizes) {
  EXPECT_EQ(infer("split", {t("f32[B, S + T]"), shape({"S", "T"})}, {kw("axis", lit(int64_t{1}))}),
            "(f32[B, S], f32[B, T])");
  EXPECT_EQ(infer("split", {t("f32[10]"), shape({"3", "7"})}), "(f32[3], f32[7])");
  EXPECT_TRUE(facts().empty());
  EXPECT_EQ(infer("split", {t("f32[10]"), shape({"3", "6"})}),
            "error: split: the sum of the sizes and dim 0 differ: 9 vs 10");
  EXPECT_EQ(infer("split", {t("f32[N]"), shape({"S", "T"})}), "(f32[S], f32[T])");
  EXPECT_EQ(facts(), (Strings{"N == S + T (split: the sum of the sizes and dim 0)"}));
}

TEST_F(OpsTest, SliceConstants) {
  EXPECT_EQ(infer("slice", {t("f32[B, 10]")},
                  {kw("axis", lit(int64_t{1})), kw("start", lit(int64_t{2})),
                   kw("end", lit(int64_t{8})), kw("step", lit(int64_t{3}))}),
            "f32[B, 2]");
  // Python's clamping and negative indices.
  EXPECT_EQ(infer("slice", {t("f32[10]")}, {kw("start", lit(int64_t{-3}))}), "f32[3]");
  EXPECT_EQ(
      infer("slice", {t("f32[10]")}, {kw("start", lit(int64_t{4})), kw("end", lit(int64_t{100}))}),
      "f32[6]");
  EXPECT_EQ(
      infer("slice", {t("f32[10]")}, {kw("start", lit(int64_t{8})), kw("end", lit(int64_t{2}))}),
      "f32[0]");
  EXPECT_EQ(infer("slice", {t("f32[10]")}, {kw("step", lit(int64_t{0}))}),
            "error: slice: step must be positive, got 0");
  EXPECT_TRUE(facts().empty());
}

TEST_F(OpsTest, SliceSymbolic) {
  EXPECT_EQ(
      infer("slice", {t("f32[B, S]")}, {kw("axis", lit(int64_t{1})), kw("end", shape({"S - 1"}))}),
      "f32[B, S - 1]");
  EXPECT_EQ(facts(), (Strings{"1 <= S (slice: start 0 must be <= end S - 1)"}));
  recorded_.clear();
  EXPECT_EQ(infer("slice", {t("f32[S]")}, {kw("start", shape({"1"})), kw("step", lit(int64_t{2}))}),
            "f32[S/2]");
  EXPECT_EQ(facts(), (Strings{"1 <= S (slice: start 1 must be <= end S)"}));
  recorded_.clear();
  EXPECT_EQ(infer("slice", {t("f32[S]")}, {kw("start", lit(int64_t{-2}))}), "f32[2]");
  EXPECT_EQ(facts(), (Strings{"2 <= S (slice: start S - 2 must be >= 0)"}));
  recorded_.clear();
  assume("S >= 64");
  EXPECT_EQ(
      infer("slice", {t("f32[S]")}, {kw("start", lit(int64_t{0})), kw("end", lit(int64_t{64}))}),
      "f32[64]");
  EXPECT_TRUE(facts().empty());
  EXPECT_EQ(infer("slice", {t("f32[S]")}, {kw("start", shape({"S + 1"}))}),
            "error: slice: start S + 1 must be <= end S");
}

TEST_F(OpsTest, Take) {
  EXPECT_EQ(infer("take", {t("f32[V, D]"), t("i64[B, S]")}), "f32[B, S, D]");
  EXPECT_EQ(infer("take", {t("f32[V, D]"), t("i32[N]")}, {kw("axis", lit(int64_t{1}))}),
            "f32[V, N]");
  EXPECT_EQ(infer("take", {t("f32[V, D]"), lit(int64_t{3})}), "f32[D]");
  EXPECT_EQ(infer("take", {t("f32[V, D]"), t("f32[N]")}),
            "error: take expects integer indices, got f32[N]");
  EXPECT_EQ(infer("take", {t("f32[V, D]"), t("i64[N]")}, {kw("axis", lit(int64_t{2}))}),
            "error: take: axis 2 is out of range for rank 2");
}

TEST_F(OpsTest, Pad) {
  EXPECT_EQ(infer("pad", {t("f32[N, C, H, W]"), shape({"0", "0", "0", "0", "1", "1", "2", "3"})}),
            "f32[N, C, H + 2, W + 5]");
  EXPECT_EQ(infer("pad", {t("i32[S]"), shape({"P", "0"})}, {kw("value", lit(int64_t{-1}))}),
            "i32[P + S]");
  EXPECT_EQ(infer("pad", {t("i32[S]"), shape({"1", "1"})}, {kw("value", lit(0.5))}),
            "error: pad: the value cannot fill a i32 tensor");
  EXPECT_EQ(infer("pad", {t("f32[A, B, C]"), shape({"1", "1", "1", "1"})}),
            "error: pad expects 2 entries per dim (6 for rank 3), got 4");
  EXPECT_EQ(infer("pad", {t("f32[4]"), shape({"-3", "-3"})}), "error: pad: dim -2 is negative");
  EXPECT_EQ(infer("pad", {t("f32[S]"), shape({"-1", "0"})}), "f32[S - 1]");
  EXPECT_EQ(facts(), (Strings{"1 <= S (pad: dim S - 1 must be >= 0)"}));
}

// ---------------------------------------------------------------- matmul

TEST_F(OpsTest, Matmul) {
  EXPECT_EQ(infer("matmul", {t("f32[B, S, 768]"), t("f32[768, 2304]")}), "f32[B, S, 2304]");
  EXPECT_EQ(infer("matmul", {t("f32[B, 12, S, 64]"), t("f32[B, 12, 64, S]")}), "f32[B, 12, S, S]");
  EXPECT_EQ(infer("matmul", {t("f32[1, H, M, K]"), t("f32[B, 1, K, N]")}), "f32[B, H, M, N]");
  EXPECT_TRUE(facts().empty());
}

TEST_F(OpsTest, MatmulVectors) {
  EXPECT_EQ(infer("matmul", {t("f32[K]"), t("f32[K, N]")}), "f32[N]");
  EXPECT_EQ(infer("matmul", {t("f32[B, M, K]"), t("f32[K]")}), "f32[B, M]");
  EXPECT_EQ(infer("matmul", {t("f32[K]"), t("f32[K]")}), "f32[]");
  EXPECT_EQ(infer("matmul", {t("f32[K]"), t("f32[B, K, N]")}), "f32[B, N]");
  EXPECT_EQ(infer("matmul", {t("f32[]"), t("f32[K]")}),
            "error: matmul: operands must have rank >= 1, got f32[]");
}

TEST_F(OpsTest, MatmulFactsAndErrors) {
  EXPECT_EQ(infer("matmul", {t("f32[M, K]"), t("f32[L, N]")}), "f32[M, N]");
  EXPECT_EQ(facts(), (Strings{"K == L (matmul: contracted dims)"}));
  EXPECT_EQ(infer("matmul", {t("f32[B, M, K]"), t("f32[C, K, N]")}), "f32[B, M, N]");
  EXPECT_EQ(facts()[1], "B == C (broadcast of batch dim 0 of matmul)");
  EXPECT_EQ(infer("matmul", {t("f32[2, M, K]"), t("f32[3, K, N]")}),
            "error: matmul: cannot broadcast dims 2 and 3");
  EXPECT_EQ(infer("matmul", {t("f32[M, K + 1]"), t("f32[K, N]")}),
            "error: matmul: contracted dims differ: K + 1 vs K");
  ASSERT_EQ(diag().notes.size(), 1u);
  EXPECT_NE(diag().notes[0].message.find("they can never be equal (e.g. K="), std::string::npos);
  EXPECT_EQ(infer("matmul", {t("f32[M, K]"), t("f16[K, N]")}),
            "error: matmul: dtypes differ: f32 vs f16");
}

// ---------------------------------------------------------------- conv2d

TEST_F(OpsTest, Conv2dConstant) {
  EXPECT_EQ(infer("conv2d", {t("f32[N, 3, 224, 224]"), t("f32[64, 3, 7, 7]")},
                  {kw("stride", lit(int64_t{2})), kw("padding", lit(int64_t{3}))}),
            "f32[N, 64, 112, 112]");
  EXPECT_EQ(infer("conv2d", {t("f32[1, 8, 10, 12]"), t("f32[16, 4, 3, 3]")},
                  {kw("groups", lit(int64_t{2})), kw("dilation", shape({"2", "1"}))}),
            "f32[1, 16, 6, 10]");
  EXPECT_TRUE(facts().empty());
}

TEST_F(OpsTest, Conv2dSymbolic) {
  EXPECT_EQ(infer("conv2d", {t("f32[N, 3, H, W]"), t("f32[64, 3, 3, 3]")},
                  {kw("padding", lit(int64_t{1}))}),
            "f32[N, 64, H, W]");
  // The padded input must cover the kernel: H + 2 >= 3.
  EXPECT_EQ(facts(), (Strings{"1 <= H (conv2d: the padded input height H + 2 must be at least the "
                              "dilated kernel height 3)",
                              "1 <= W (conv2d: the padded input width W + 2 must be at least the "
                              "dilated kernel width 3)"}));
  recorded_.clear();
  assume("H >= 1");
  assume("W >= 1");
  EXPECT_EQ(infer("conv2d", {t("f32[N, 3, H, W]"), t("f32[64, 3, 3, 3]")},
                  {kw("padding", lit(int64_t{1}))}),
            "f32[N, 64, H, W]");
  EXPECT_TRUE(facts().empty());
}

TEST_F(OpsTest, Conv2dSymbolicStridePairs) {
  EXPECT_EQ(infer("conv2d", {t("f32[N, C, H, W]"), t("f32[O, C, 3, 5]")},
                  {kw("stride", shape({"2", "1"})), kw("padding", shape({"0", "2"}))}),
            "f32[N, O, (H + 1)/2 - 1, W]");
  EXPECT_EQ(facts(), (Strings{"3 <= H (conv2d: the padded input height H must be at least the "
                              "dilated kernel height 3)",
                              "1 <= W (conv2d: the padded input width W + 4 must be at least the "
                              "dilated kernel width 5)"}));
}

TEST_F(OpsTest, Conv2dErrors) {
  EXPECT_EQ(infer("conv2d", {t("f32[3, 224, 224]"), t("f32[64, 3, 7, 7]")}),
            "error: conv2d expects a rank-4 NCHW input, got f32[3, 224, 224]");
  EXPECT_EQ(infer("conv2d", {t("f32[1, 3, 8, 8]"), t("f32[64, 3, 7]")}),
            "error: conv2d expects rank-4 OIHW weights, got f32[64, 3, 7]");
  EXPECT_EQ(infer("conv2d", {t("f32[1, 3, 8, 8]"), t("f32[64, 4, 3, 3]")}),
            "error: conv2d: input channels and groups * weight in-channels differ: 3 vs 4");
  EXPECT_EQ(infer("conv2d", {t("f32[1, 4, 8, 8]"), t("f32[5, 2, 3, 3]")},
                  {kw("groups", lit(int64_t{2}))}),
            "error: conv2d: out-channels 5 must be divisible by groups 2");
  EXPECT_EQ(
      infer("conv2d", {t("f32[1, 3, 2, 8]"), t("f32[4, 3, 3, 3]")}),
      "error: conv2d: the padded input height 2 must be at least the dilated kernel height 3");
  EXPECT_EQ(infer("conv2d", {t("f32[1, 3, 8, 8]"), t("f32[4, 3, 3, 3]")},
                  {kw("stride", lit(int64_t{0}))}),
            "error: conv2d: stride must be >= 1, got 0");
  EXPECT_EQ(infer("conv2d", {t("f32[1, 3, 8, 8]"), t("f32[4, 3, 3, 3]")},
                  {kw("padding", shape({"1", "2", "3"}))}),
            "error: conv2d: padding must be an int or a pair of ints, got [1, 2, 3]");
  EXPECT_EQ(infer("conv2d", {t("f32[1, 3, 8, 8]"), t("f32[4, 3, 3, 3]")},
                  {kw("groups", lit(int64_t{0}))}),
            "error: conv2d: groups must be >= 1, got 0");
}

// ---------------------------------------------------------------- pools

TEST_F(OpsTest, PoolConstant) {
  // ResNet's stem pool: 3x3, stride 2, padding 1.
  EXPECT_EQ(infer("max_pool2d", {t("f32[N, 64, 112, 112]"), lit(int64_t{3})},
                  {kw("stride", lit(int64_t{2})), kw("padding", lit(int64_t{1}))}),
            "f32[N, 64, 56, 56]");
  // The stride defaults to the kernel.
  EXPECT_EQ(infer("avg_pool2d", {t("f16[2, 3, 7, 10]"), shape({"2", "3"})}), "f16[2, 3, 3, 3]");
  EXPECT_EQ(infer("avg_pool2d", {t("f32[1, 1, 5, 5]"), lit(int64_t{2})},
                  {kw("stride", shape({"1", "3"})), kw("padding", shape({"1", "0"})),
                   kw("count_include_pad", lit(true))}),
            "f32[1, 1, 6, 2]");
  EXPECT_EQ(infer("max_pool2d", {t("i32[1, 2, 1, 1]"), lit(int64_t{1})}), "i32[1, 2, 1, 1]");
  EXPECT_TRUE(facts().empty());
}

TEST_F(OpsTest, PoolSymbolic) {
  EXPECT_EQ(infer("max_pool2d", {t("f32[N, C, H, W]"), lit(int64_t{3})},
                  {kw("stride", lit(int64_t{2})), kw("padding", lit(int64_t{1}))}),
            "f32[N, C, (H + 1)/2, (W + 1)/2]");
  // The padded input must cover the window: H + 2 >= 3.
  EXPECT_EQ(facts(), (Strings{"1 <= H (max_pool2d: the padded input height H + 2 must be at "
                              "least the kernel height 3)",
                              "1 <= W (max_pool2d: the padded input width W + 2 must be at "
                              "least the kernel width 3)"}));
  recorded_.clear();
  assume("H >= 2");
  assume("W >= 3");
  EXPECT_EQ(infer("avg_pool2d", {t("f32[N, C, H, W]"), shape({"2", "3"})}),
            "f32[N, C, H/2, W/3]");
  EXPECT_TRUE(facts().empty());
}

TEST_F(OpsTest, PoolErrors) {
  EXPECT_EQ(infer("max_pool2d", {t("f32[3, 224, 224]"), lit(int64_t{2})}),
            "error: max_pool2d expects a rank-4 NCHW input, got f32[3, 224, 224]");
  EXPECT_EQ(infer("avg_pool2d", {t("i64[1, 3, 8, 8]"), lit(int64_t{2})}),
            "error: avg_pool2d expects a float tensor, got i64[1, 3, 8, 8]");
  EXPECT_EQ(infer("max_pool2d", {t("bool[1, 3, 8, 8]"), lit(int64_t{2})}),
            "error: max_pool2d expects a numeric tensor, got bool[1, 3, 8, 8]");
  EXPECT_EQ(infer("max_pool2d", {t("f32[1, 3, 8, 8]"), lit(int64_t{0})}),
            "error: max_pool2d: kernel must be >= 1, got 0");
  EXPECT_EQ(infer("max_pool2d", {t("f32[1, 3, 8, 8]"), shape({"2", "S"})}),
            "error: max_pool2d: kernel must be an int or a pair of ints, got [2, S]");
  EXPECT_EQ(infer("avg_pool2d", {t("f32[1, 3, 8, 8]"), lit(int64_t{2})},
                  {kw("stride", shape({"1", "0"}))}),
            "error: avg_pool2d: stride must be >= 1, got 0");
  EXPECT_EQ(infer("max_pool2d", {t("f32[1, 3, 8, 8]"), lit(int64_t{2})},
                  {kw("padding", lit(int64_t{-1}))}),
            "error: max_pool2d: padding must be >= 0, got -1");
  EXPECT_EQ(infer("max_pool2d", {t("f32[1, 3, 8, 8]"), shape({"3", "2"})},
                  {kw("padding", shape({"1", "2"}))}),
            "error: max_pool2d: padding 2 must be less than the kernel width 2");
  EXPECT_EQ(infer("avg_pool2d", {t("f32[1, 3, 2, 8]"), lit(int64_t{3})}),
            "error: avg_pool2d: the padded input height 2 must be at least the kernel height 3");
  EXPECT_EQ(infer("max_pool2d", {t("f32[1, 3, 8, 8]"), lit(int64_t{2})},
                  {kw("count_include_pad", lit(true))}),
            "error: max_pool2d has no parameter 'count_include_pad'");
  // A symbolic width that may be too small: a run-time fact.
  EXPECT_EQ(infer("max_pool2d", {t("f32[1, 3, 8, W]"), lit(int64_t{3})},
                  {kw("stride", lit(int64_t{1}))}),
            "f32[1, 3, 6, W - 2]");
  EXPECT_EQ(facts(), (Strings{"3 <= W (max_pool2d: the padded input width W must be at least "
                              "the kernel width 3)"}));
}

// ---------------------------------------------------------------- creation

TEST_F(OpsTest, Arange) {
  EXPECT_EQ(infer("arange", {lit(int64_t{0}), lit(int64_t{10}), lit(int64_t{3})}), "i64[4]");
  EXPECT_EQ(infer("arange", {lit(int64_t{10}), lit(int64_t{0}), lit(int64_t{-3})}), "i64[4]");
  EXPECT_EQ(infer("arange", {lit(int64_t{5}), lit(int64_t{0})}), "i64[0]");
  EXPECT_EQ(infer("arange", {shape({"S"})}, {kw("dtype", str("f32"))}), "f32[S]");
  EXPECT_EQ(infer("arange", {lit(int64_t{0}), shape({"S"}), lit(int64_t{2})}), "i64[(S + 1)/2]");
  EXPECT_TRUE(facts().empty());
  EXPECT_EQ(infer("arange", {shape({"T"}), shape({"S"})}), "i64[S - T]");
  EXPECT_EQ(facts(), (Strings{"T <= S (arange: start T must be <= end S)"}));
  EXPECT_EQ(infer("arange", {lit(int64_t{0}), lit(int64_t{3}), lit(int64_t{0})}),
            "error: arange: step must not be zero");
  EXPECT_EQ(infer("arange", {lit(0.5), lit(int64_t{3})}),
            "error: arange expects an integer or a symbolic dim for 'start'");
  EXPECT_EQ(infer("arange", {lit(int64_t{3})}, {kw("dtype", str("bool"))}),
            "error: arange cannot make a bool tensor");
}

TEST_F(OpsTest, FullZerosShapeOfNonzero) {
  EXPECT_EQ(infer("full", {shape({"B", "S"}), lit(1.5)}), "f32[B, S]");
  EXPECT_EQ(infer("full", {shape({"B"}), lit(int64_t{7})}, {kw("dtype", str("i32"))}), "i32[B]");
  EXPECT_EQ(infer("full", {shape({"B"}), lit(1.5)}, {kw("dtype", str("i32"))}),
            "error: full: the value cannot fill a i32 tensor");
  EXPECT_EQ(infer("full", {shape({"-1"}), lit(1.5)}), "error: full: dim -1 is negative");
  EXPECT_EQ(infer("zeros", {shape({"B", "2*S"})}, {kw("dtype", str("f16"))}), "f16[B, 2*S]");
  EXPECT_EQ(infer("shape_of", {t("f32[B, S, 768]")}), "i64[3]");
  EXPECT_EQ(infer("nonzero", {t("bool[B, S]")}), "i64[nnz0, 2]");
  // Fresh symbols never repeat and avoid reserved names.
  ctx_.reserve_symbol("nnz1");
  EXPECT_EQ(infer("nonzero", {t("bool[B]")}), "i64[nnz2, 1]");
  EXPECT_EQ(sym::to_string(ctx_.fresh_symbol("_d3")), "d0");
  EXPECT_EQ(sym::to_string(ctx_.fresh_symbol("N")), "N0");
  EXPECT_EQ(sym::to_string(ctx_.fresh_symbol("N")), "N1");
  EXPECT_EQ(sym::to_string(ctx_.fresh_symbol("")), "n0");
}

TEST_F(OpsTest, Unique) {
  EXPECT_EQ(infer("unique", {t("f32[B, S]")}), "f32[uniq0]");
  EXPECT_EQ(infer("unique", {t("i64[]")}), "i64[uniq1]");
}

TEST_F(OpsTest, MaskSelect) {
  EXPECT_EQ(infer("mask_select", {t("f32[B, S]"), t("bool[B, S]")}), "f32[sel0]");
  EXPECT_EQ(infer("mask_select", {t("i64[B, S, 4]"), t("bool[B]")}), "i64[sel1, S, 4]");
  EXPECT_EQ(infer("mask_select", {t("f32[B, S]"), t("f32[B]")}),
            "error: mask_select: the mask must be a bool tensor of rank 1 to 2 (x is f32[B, S]), "
            "got f32[B]");
  EXPECT_EQ(infer("mask_select", {t("f32[B]"), t("bool[B, S]")}),
            "error: mask_select: the mask must be a bool tensor of rank 1 to 1 (x is f32[B]), got "
            "bool[B, S]");
  EXPECT_EQ(infer("mask_select", {t("f32[4, S]"), t("bool[5]")}).substr(0, 46),
            "error: mask_select: dim 0 of the mask and of x");
}

TEST_F(OpsTest, ExtremeConstantsDoNotOverflow) {
  const int64_t big = INT64_MAX;
  EXPECT_EQ(infer("arange", {lit(INT64_MIN), lit(big)}),
            "error: arange: the length does not fit in int64");
  EXPECT_EQ(infer("arange", {lit(int64_t{0}), lit(big), lit(big)}), "i64[1]");
  EXPECT_EQ(infer("slice", {t("f32[10]")}, {kw("start", lit(int64_t{1})), kw("step", lit(big))}),
            "f32[1]");
  EXPECT_EQ(infer("slice", {t("f32[10]")}, {kw("start", lit(INT64_MIN)), kw("end", lit(big))}),
            "f32[10]");
  EXPECT_EQ(infer("sum", {t("f32[2]")}, {kw("axis", lit(INT64_MIN))}),
            "error: sum: axis -9223372036854775808 is out of range for rank 1");
  // Padding so large that the output size does not fold: still an answer, never a crash.
  std::string r =
      infer("conv2d", {t("f32[1, 1, 8, 8]"), t("f32[1, 1, 3, 3]")}, {kw("padding", lit(big))});
  EXPECT_EQ(r.rfind("f32[1, 1, ", 0), 0u) << r;
  EXPECT_EQ(infer("reshape", {t("f32[4611686018427387904, 4]"), shape({"-1"})}).rfind("f32[", 0),
            0u);
}

// Every op with every pairing of awkward arguments: an error or a type, never both, never
// neither, never a crash.
TEST_F(OpsTest, AnyArgumentsGiveATypeOrAnError) {
  std::vector<Expr> candidates = {t("f32[S, 4]"),
                                  t("f32[]"),
                                  t("i64[3]"),
                                  t("bool[S]"),
                                  t("f32[1, 2, S, S]"),
                                  lit(int64_t{0}),
                                  lit(int64_t{-7}),
                                  lit(2.5),
                                  lit(true),
                                  shape({"2", "-1"}),
                                  shape({}),
                                  shape({"S - 3"}),
                                  str("f16"),
                                  str("nope"),
                                  ListExpr::make({t("f32[S, 4]"), t("f32[T, 4]")}),
                                  ListExpr::make({}),
                                  Expr(Var::make("tup", Type::tuple({type("f32[2]")})))};
  size_t calls = 0;
  for (const OpDef* op : all_ops()) {
    size_t n = std::min<size_t>(op->params.size(), 2);
    for (const Expr& a : candidates) {
      if (n == 1) {
        infer(op->name, {a});
        ++calls;
        continue;
      }
      for (const Expr& b : candidates) {
        infer(op->name, {a, b});
        ++calls;
      }
    }
    // The remaining parameters by keyword, each with each candidate.
    for (size_t k = 2; k < op->params.size(); ++k)
      for (const Expr& c : candidates) {
        std::vector<Expr> first = {candidates[0]};
        if (op->params[1].kind == ParamKind::Tensor)
          first.push_back(candidates[0]);
        else
          first.push_back(shape({"2"}));
        infer(op->name, first, {kw(op->params[k].name, c)});
        ++calls;
      }
  }
  EXPECT_GT(calls, 10000u);
}

// ---------------------------------------------------------------- helpers

TEST_F(OpsTest, Helpers) {
  sym::Bindings b = {{"S", 1}, {"T", 2}, {"U", 3}};
  EXPECT_EQ(format_bindings(b), "S=1, T=2, U=3");
  EXPECT_EQ(format_bindings(b, dim("S + T")), "S=1, T=2");
  EXPECT_EQ(sym::to_string(substitute(dim("2*S + T"), {{"S", dim("B*H")}})), "2*(B*H) + T");
}

} // namespace
} // namespace dsc::ir
