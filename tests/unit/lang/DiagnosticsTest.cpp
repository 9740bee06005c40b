// Mistakes and what the front end says about them: the message, where it points, the notes.

#include <gtest/gtest.h>

#include "LangTestUtil.h"

namespace dsc::lang {
namespace {

using testing::parse;

// ---------------------------------------------------------------- syntax

TEST(Diagnostics, PrintedFormHasFileLineColumnAndCaret) {
  auto p = parse("fn f(x: f32[B]) {\n  let y = x +\n}\n");
  EXPECT_FALSE(p->module);
  EXPECT_EQ(p->printed(), "test.dsc:3:1: error: expected an expression, found '}'\n"
                          "  }\n"
                          "  ^\n");
}

TEST(Diagnostics, MissingCloseParen) {
  auto p = parse("fn f(x: f32[B]) { let y = matmul(x, x\n  return y }");
  EXPECT_EQ(p->errors(), "2:3: expected ')' or ',', found 'return'\n");
}

TEST(Diagnostics, DoubleComma) {
  auto p = parse("fn f(x: f32[B]) { let y = foo(x,, 1) return y }");
  EXPECT_EQ(p->errors(), "1:33: expected an expression or ')', found ','\n");
}

TEST(Diagnostics, MissingDimBracket) {
  auto p = parse("fn f(x: f32[B) { return x }");
  EXPECT_EQ(p->errors(), "1:14: expected ']' or ',', found ')'\n");
}

TEST(Diagnostics, GarbageAtTopLevel) {
  auto p = parse("let x = 1");
  EXPECT_EQ(p->errors(), "1:1: expected a declaration or end of file, found 'let'\n");
}

TEST(Diagnostics, MissingParameterType) {
  auto p = parse("fn f(x) { return x }");
  EXPECT_EQ(p->errors(), "1:7: expected ':', found ')'\n");
}

TEST(Diagnostics, MissingElse) {
  auto p = parse("fn f(c: bool[], a: f32[B]) { return if c { a } }");
  EXPECT_EQ(p->errors(), "1:48: expected 'else', found '}'\n");
}

TEST(Diagnostics, UnexpectedIdentifierInStatementPosition) {
  auto p = parse("fn f(x: f32[B]) {\n  let y = x\n  y = x\n  return y\n}");
  EXPECT_EQ(p->errors(), "3:3: expected a statement or '}', found identifier 'y'\n");
}

TEST(Diagnostics, PrimMissingArrow) {
  auto p = parse("prim p(a: f32[n]) (y: f32[n]) { }");
  EXPECT_EQ(p->errors(), "1:19: expected '->', found '('\n");
}

TEST(Diagnostics, LexicalErrorsAreReportedOncePerLine) {
  auto p = parse("fn f(x: f32[B]) { let y = x $ 2\n return y }");
  EXPECT_EQ(p->errors(), "1:29: unexpected character '$'\n");
}

TEST(Diagnostics, UnterminatedString) {
  auto p = parse("fn f(x: f32[B]) { let y = cast(x, \"f16)\n return y }");
  EXPECT_EQ(p->errors().substr(0, 30), "1:35: unterminated string\n2:2:");
}

// ---------------------------------------------------------------- names

TEST(Diagnostics, UnknownNameWithSuggestion) {
  auto p = parse("fn f(hidden: f32[B]) { let y = hiden * 2 return y }");
  EXPECT_EQ(p->errors(), "1:32: unknown name 'hiden'\n");
  EXPECT_EQ(p->notes(), "did you mean 'hidden'?\n");
}

TEST(Diagnostics, UnknownNameWithoutSuggestion) {
  auto p = parse("fn f(x: f32[B]) { return zzz }");
  EXPECT_EQ(p->errors(), "1:26: unknown name 'zzz'\n");
  EXPECT_EQ(p->notes(), "");
}

TEST(Diagnostics, UsedBeforeBound) {
  auto p = parse("fn f(x: f32[B]) {\n  let a = b + 1\n  let b = x\n  return a\n}");
  EXPECT_EQ(p->errors(), "2:11: 'b' is used before it is bound\n");
  ASSERT_EQ(p->first()->notes.size(), 1u);
  EXPECT_EQ(p->first()->notes[0].loc.line, 3u);
  EXPECT_EQ(p->first()->notes[0].loc.col, 7u);
}

TEST(Diagnostics, NotInScopeAfterBranch) {
  auto p = parse("fn f(c: bool[], x: f32[B]) {\n  let y = if c { let t = x; t } else { x }\n"
                 "  return t\n}");
  EXPECT_EQ(p->errors(), "3:10: 't' is not in scope here\n");
}

TEST(Diagnostics, Redefinition) {
  auto p = parse("fn f(x: f32[B]) {\n  let y = x\n  let y = x\n  return y\n}");
  EXPECT_EQ(p->errors(), "3:7: redefinition of 'y'\n");
  ASSERT_EQ(p->first()->notes.size(), 1u);
  EXPECT_EQ(p->first()->notes[0].loc.line, 2u);
  EXPECT_EQ(p->first()->notes[0].message, "'y' is first bound here");
}

TEST(Diagnostics, DuplicateParameter) {
  auto p = parse("fn f(x: f32[B], x: f32[B]) { return x }");
  EXPECT_EQ(p->errors(), "1:17: duplicate parameter 'x'\n");
}

TEST(Diagnostics, DuplicateFunction) {
  auto p = parse("fn f(x: f32[B]) { return x }\nprim f(a: f32[n]) -> (y: f32[n]) { }");
  EXPECT_EQ(p->errors(), "2:6: redefinition of 'f'\n");
  EXPECT_EQ(p->notes(), "the first function named 'f' is here\n");
}

TEST(Diagnostics, SymbolNotBoundByAParameter) {
  auto p = parse("fn f(x: f32[B, S]) -> f32[B, T] { return x }");
  EXPECT_EQ(p->errors(), "1:30: symbol 'T' is not bound by any parameter\n");
}

TEST(Diagnostics, WhereClauseSymbolNotBound) {
  auto p = parse("fn f(x: f32[B]) where B >= 1, K <= 4 { return x }");
  EXPECT_EQ(p->errors(), "1:31: symbol 'K' is not bound by any parameter\n");
}

TEST(Diagnostics, WhereClauseBoundOnlyInTheBody) {
  auto p = parse("fn f(x: f32[B]) where N >= 1 {\n  let y: f32[N] = x\n  return y\n}");
  EXPECT_EQ(p->errors(), "1:23: symbol 'N' is not bound by any parameter\n");
  ASSERT_EQ(p->first()->notes.size(), 1u);
  EXPECT_EQ(p->first()->notes[0].loc.line, 2u);
}

TEST(Diagnostics, WhereClauseMustBeAPredicate) {
  auto p = parse("fn f(x: f32[B]) where B + 1 { return x }");
  EXPECT_EQ(p->errors(), "1:25: a 'where' clause must be a predicate, such as 'S >= 1'; found an "
                         "integer expression\n");
}

TEST(Diagnostics, SymbolUsedInABodyBeforeItsLet) {
  auto p =
      parse("fn f(x: f32[B]) {\n  let r = reshape(x, [N])\n  let y: f32[N] = x\n  return y\n}");
  EXPECT_EQ(p->errors(), "2:23: symbol 'N' is used before it is bound\n");
}

TEST(Diagnostics, UnknownDtypeWithAlias) {
  auto p = parse("fn f(x: float32[B]) { return x }");
  EXPECT_EQ(p->errors(), "1:9: unknown dtype 'float32'\n");
  EXPECT_EQ(p->notes(), "did you mean 'f32'?\n");
}

TEST(Diagnostics, DtypeWithoutDims) {
  auto p = parse("fn f(x: f32) { return x }");
  EXPECT_EQ(p->errors(), "1:9: 'f32' is a dtype; a tensor type lists its dims: f32[...] (f32[] for "
                         "a scalar)\n");
}

TEST(Diagnostics, BadDefault) {
  auto p = parse("fn f(x: tensor, axis: int = 1.5) { return x }");
  EXPECT_EQ(p->errors(),
            "1:29: the default of 'axis' must be an integer literal; found a number\n");
}

TEST(Diagnostics, MissingReturn) {
  auto p = parse("fn f(x: f32[B]) {\n  let y = x\n}");
  EXPECT_EQ(p->errors(), "3:1: function 'f' does not end with 'return'\n");
}

TEST(Diagnostics, StatementAfterReturn) {
  auto p = parse("fn f(x: f32[B]) {\n  return x\n  let y = x\n}");
  EXPECT_EQ(p->errors(), "3:3: statement after 'return'\n");
}

TEST(Diagnostics, ValueIsNotAFunction) {
  auto p = parse("fn f(x: f32[B]) { return x(1) }");
  EXPECT_EQ(p->errors(), "1:26: 'x' is a value, not a function\n");
}

TEST(Diagnostics, UnknownModule) {
  auto p = parse("fn f(x: f32[B]) { return nn.relu(x) }");
  EXPECT_EQ(p->errors(), "1:26: unknown module 'nn' in 'nn.relu'\n");
  EXPECT_EQ(p->notes(), "import it first: import nn\n");
}

TEST(Diagnostics, RepeatedKeyword) {
  auto p = parse("fn f(x: f32[B]) { return sum(x, axis=1, axis=2) }");
  EXPECT_EQ(p->errors(), "1:41: keyword argument 'axis' is given twice\n");
}

TEST(Diagnostics, PositionalAfterKeyword) {
  auto p = parse("fn f(x: f32[B]) { return sum(x, axis=1, x) }");
  EXPECT_EQ(p->errors(), "1:41: positional argument after keyword argument 'axis'\n");
}

TEST(Diagnostics, TupleIndexMustBeALiteral) {
  auto p = parse("fn f(x: f32[B]) { let t = split(x, 2) return t[0.5] }");
  EXPECT_EQ(p->errors(), "1:48: a tuple index must be an integer literal; found a number\n");
}

TEST(Diagnostics, IntegerLiteralTooLarge) {
  auto p = parse("fn f(x: f32[B]) { return x + 9223372036854775808 }");
  EXPECT_EQ(p->errors(), "1:30: integer literal 9223372036854775808 is too large\n");
}

TEST(Diagnostics, FloatInADim) {
  auto p = parse("fn f(x: f32[B, 1.5]) { return x }");
  EXPECT_EQ(p->errors(), "1:16: a dim must be an integer expression; found a number\n");
}

TEST(Diagnostics, QuestionMarkOutsideATypeIsAnError) {
  auto p = parse("fn f(x: f32[B]) { return reshape(x, [?]) }");
  EXPECT_EQ(p->errors(), "1:38: '?' is not a value\n");
}

TEST(Diagnostics, DestructuringCannotAssertAType) {
  auto p = parse("fn f(x: f32[B]) { let a, b: f32[B] = split(x, 2) return a }");
  EXPECT_EQ(p->errors(), "1:29: a destructuring 'let' cannot assert a type\n");
}

TEST(Diagnostics, ReturnInsideABranch) {
  auto p = parse("fn f(c: bool[], x: f32[B]) { return if c { return x } else { x } }");
  EXPECT_EQ(p->errors(), "1:44: 'return' inside an if-branch\n");
}

TEST(Diagnostics, BranchWithoutAValue) {
  auto p = parse("fn f(c: bool[], x: f32[B]) {\n  return if c { let t = x } else { x }\n}");
  EXPECT_EQ(p->errors(), "2:27: an if-branch must end with its value\n");
}

TEST(Diagnostics, ParameterNamedLikeASymbol) {
  auto p = parse("fn f(x: f32[S], S: int) { return x }");
  EXPECT_EQ(p->errors(), "1:17: parameter 'S' has the name of a symbol\n");
}

// ---------------------------------------------------------------- prims

TEST(Diagnostics, PrimMixedDtypes) {
  auto p = parse("prim p(a: f32[n]) -> (y: f32[n]) {\n  for i in 0..n {\n    y[i] = a[i] + i\n"
                 "  }\n}");
  EXPECT_EQ(p->errors(), "3:17: the operands of '+' have different dtypes: f32 and i64\n");
  EXPECT_EQ(p->notes(), "convert one with cast(value, \"f32\")\n");
}

TEST(Diagnostics, PrimWrongNumberOfIndices) {
  auto p = parse("prim p(a: f32[n, m]) -> (y: f32[n]) { for i in 0..n { y[i] = a[i] } }");
  EXPECT_EQ(p->errors(), "1:62: buffer 'a' has rank 2, but 1 index is given\n");
}

TEST(Diagnostics, PrimStoreDtypeMismatch) {
  auto p = parse("prim p(a: f32[n]) -> (y: i32[n]) { for i in 0..n { y[i] = a[i] } }");
  EXPECT_EQ(p->errors(), "1:59: cannot use an f32 value as an element of 'y', an i32 buffer\n");
}

TEST(Diagnostics, PrimAssignToLet) {
  auto p = parse("prim p(a: f32[n]) -> (y: f32[n]) {\n  let c: f32 = 1.0\n  c = 2.0\n}");
  EXPECT_EQ(p->errors(), "3:3: cannot assign to 'c', a local\n");
  EXPECT_EQ(p->notes(), "declared with 'let' here; declare it with 'var' to assign it\n");
}

TEST(Diagnostics, PrimAssignToBuffer) {
  auto p = parse("prim p(a: f32[n]) -> (y: f32[n]) { y = 1.0 }");
  EXPECT_EQ(p->errors(), "1:36: cannot assign to 'y', a buffer\n");
}

TEST(Diagnostics, PrimFloatIndex) {
  auto p = parse("prim p(a: f32[n]) -> (y: f32[n]) { for i in 0..n { y[i] = a[a[i]] } }");
  EXPECT_EQ(p->errors(), "1:61: an index must be an integer; this one is f32\n");
}

TEST(Diagnostics, PrimUnknownFunction) {
  auto p = parse("prim p(a: f32[n]) -> (y: f32[n]) { for i in 0..n { y[i] = mxa(a[i], 0.0) } }");
  EXPECT_EQ(p->errors(), "1:59: unknown scalar function 'mxa'\n");
  EXPECT_EQ(p->notes(), "did you mean 'max'?\n");
}

TEST(Diagnostics, PrimExpNeedsAFloat) {
  auto p = parse("prim p(a: i64[n]) -> (y: f32[n]) { for i in 0..n { y[i] = exp(a[i]) } }");
  EXPECT_EQ(p->errors(), "1:63: 'exp' needs a float argument; this one is i64\n");
}

TEST(Diagnostics, PrimConditionMustBeBool) {
  auto p = parse("prim p(a: f32[n]) -> (y: f32[n]) { for i in 0..n { if a[i] { y[i] = 0.0 } } }");
  EXPECT_EQ(p->errors(), "1:55: an 'if' condition must be a bool; this one is f32\n");
}

TEST(Diagnostics, PrimScalarParameter) {
  auto p = parse("prim p(a: f32) -> (y: f32[]) { }");
  EXPECT_EQ(p->errors(), "1:11: a prim's parameters and outputs are buffers, such as f32[n]\n");
  EXPECT_EQ(p->notes(), "a scalar is a buffer of rank 0: f32[]\n");
}

TEST(Diagnostics, PrimWhereUnbound) {
  auto p = parse("prim p(a: f32[n]) -> (y: f32[n]) where q > 2 { }");
  EXPECT_EQ(p->errors(), "1:40: symbol 'q' is not bound by any buffer\n");
}

TEST(Diagnostics, PrimLoopBoundFromALocal) {
  auto p = parse("prim p(a: f32[n]) -> (y: f32[n]) {\n  let k: i64 = 4\n  for i in 0..k { }\n}");
  EXPECT_EQ(p->errors(), "3:15: 'k' is a local; a loop bound is an integer expression over symbols "
                         "and loop variables\n");
}

TEST(Diagnostics, PrimBadCastDtype) {
  auto p =
      parse("prim p(a: f32[n]) -> (y: f32[n]) { for i in 0..n { y[i] = cast(a[i], \"float\") } }");
  EXPECT_EQ(p->errors(), "1:70: unknown dtype 'float'\n");
  EXPECT_EQ(p->notes(), "did you mean 'f32'?\n");
}

// ---------------------------------------------------------------- recovery

TEST(Diagnostics, OneDiagnosticPerSyntaxMistake) {
  auto p = parse(R"(fn f(x: f32[B]) -> f32[B] {
  let a = foo(x,, 1)
  let b = x +
  let c = (x
  return a
}
fn g(x: f32[B) { return x }
prim p(a: f32[n]) -> (y: f32[n]) {
  for i in 0..n { y[i] = a[i] +* 2 }
  y[0] 3
}
fn h(x: f32[B]) { return x }
fn k(x: f32[B]) { let = x return x }
)");
  EXPECT_EQ(p->errors(), "2:17: expected an expression or ')', found ','\n"
                         "4:3: expected an expression, found 'let'\n"
                         "5:3: expected ')' or ',', found 'return'\n"
                         "7:14: expected ']' or ',', found ')'\n"
                         "9:32: expected an expression, found '*'\n"
                         "10:8: expected '=', found integer 3\n"
                         "13:23: expected a name, found '='\n");
  EXPECT_FALSE(p->module);
}

TEST(Diagnostics, EveryResolutionMistakeIsReported) {
  auto p = parse(R"(fn f(x: f32[B], w: f32[B, C]) -> f32[B, D] {
  let y = matmul(x, ww)
  let z = y + q
  let y = z
  return zz
}
fn g(a: tensor) { return a }
fn g(a: tensor) { return a }
)");
  EXPECT_EQ(p->errors(), "1:41: symbol 'D' is not bound by any parameter\n"
                         "2:21: unknown name 'ww'\n"
                         "3:15: unknown name 'q'\n"
                         "4:7: redefinition of 'y'\n"
                         "5:10: unknown name 'zz'\n"
                         "8:4: redefinition of 'g'\n");
}

TEST(Diagnostics, FailedBindingDoesNotCascade) {
  // `y` fails, yet later uses of y are not "unknown".
  auto p = parse("fn f(x: f32[B]) { let y = x + nope let z = y * 2 return z }");
  EXPECT_EQ(p->errors(), "1:31: unknown name 'nope'\n");
}

} // namespace
} // namespace dsc::lang
