#include "lang/Dims.h"

#include <algorithm>
#include <limits>

#include "ir/Type.h"
#include "symbolic/Syntax.h"

namespace dsc::lang {

namespace {

using symbolic::Expr;

constexpr uint64_t kMaxMagnitude = uint64_t{1} << 63;

std::optional<Expr> fail() {
  return std::nullopt;
}

// Checks that an operand has the kind its operator needs.
bool check_operand(const Expr& x, symbolic::Operands want, const ast::Expr& operand,
                   std::string_view op, DimContext& ctx) {
  const bool want_bool = want == symbolic::Operands::Predicates;
  if (x.is_bool() == want_bool) return true;
  std::string msg = "'" + std::string(op) + "' needs " +
                    (want_bool ? "predicate operands; this operand is an integer expression"
                               : "integer operands; this operand is a predicate");
  ctx.diags.error(operand.loc, std::move(msg));
  return false;
}

// The node an operator of the front end builds: the dim grammar's operator of that spelling.
const symbolic::InfixOperator& infix_operator(ast::Op op) {
  const symbolic::InfixOperator* infix = symbolic::infix_operator(ast::op_spelling(op));
  internal_assert(infix) << "'" << ast::op_spelling(op) << "' is not an operator of dims";
  return *infix;
}

std::optional<Expr> call(const ast::Expr& e, DimContext& ctx) {
  const symbolic::Function* fn = symbolic::function(e.text);
  if (!fn) {
    ctx.diags.error(e.loc, "unknown function '" + e.text + "' in " + ctx.what)
        .notes.push_back(
            {SourceLoc{}, "the functions of dims are " + symbolic::function_list("(a, b)")});
    return fail();
  }
  bool keywords = std::any_of(e.args.begin(), e.args.end(),
                              [](const ast::Arg& a) { return !a.keyword.empty(); });
  if (e.args.size() != 2 || keywords) {
    ctx.diags.error(e.loc, "'" + e.text + "' takes two arguments: " + e.text + "(a, b)");
    return fail();
  }
  std::optional<Expr> a = to_symbolic(*e.args[0].value, ctx);
  std::optional<Expr> b = to_symbolic(*e.args[1].value, ctx);
  if (!a || !b) return fail();
  constexpr symbolic::Operands kIntegers = symbolic::Operands::Integers;
  if (!check_operand(*a, kIntegers, *e.args[0].value, e.text, ctx) ||
      !check_operand(*b, kIntegers, *e.args[1].value, e.text, ctx)) {
    return fail();
  }
  return fn->make(*a, *b);
}

std::optional<Expr> compare_chain(const ast::Expr& e, DimContext& ctx) {
  std::vector<std::optional<Expr>> xs;
  bool ok = true;
  for (const ast::ExprPtr& operand : e.operands) {
    xs.push_back(to_symbolic(*operand, ctx));
    ok = ok && xs.back().has_value();
  }
  if (!ok) return fail();
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const symbolic::InfixOperator& op = infix_operator(e.ops[i]);
    if (!check_operand(*xs[i], op.operands, *e.operands[i], op.spelling, ctx) ||
        !check_operand(*xs[i + 1], op.operands, *e.operands[i + 1], op.spelling, ctx)) {
      return fail();
    }
  }
  Expr chain;
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Expr link = infix_operator(e.ops[i]).make(*xs[i], *xs[i + 1]);
    chain = chain.defined() ? symbolic::And::make(chain, link) : link;
  }
  return chain;
}

} // namespace

std::optional<int64_t> int_literal(const ast::Expr& e, bool negated, DiagnosticEngine& diags) {
  if (e.int_value == kMaxMagnitude) {
    if (negated) return std::numeric_limits<int64_t>::min();
    diags.error(e.loc, "integer literal 9223372036854775808 is too large")
        .notes.push_back({SourceLoc{}, "integers are 64-bit: at most 9223372036854775807"});
    return std::nullopt;
  }
  auto v = static_cast<int64_t>(e.int_value);
  return negated ? -v : v;
}

const char* describe_expr(const ast::Expr& e) {
  switch (e.kind) {
  case ast::ExprKind::Name:
    return "a name";
  case ast::ExprKind::Int:
    return "an integer";
  case ast::ExprKind::Float:
    return "a number";
  case ast::ExprKind::Bool:
    return "a boolean";
  case ast::ExprKind::String:
    return "a string";
  case ast::ExprKind::Question:
    return "'?'";
  case ast::ExprKind::Unary:
  case ast::ExprKind::Binary:
    return "an arithmetic expression";
  case ast::ExprKind::Compare:
    return "a comparison";
  case ast::ExprKind::Call:
    return "a call";
  case ast::ExprKind::Index:
    return "an indexing expression";
  case ast::ExprKind::List:
    return "a list";
  case ast::ExprKind::Tuple:
    return "a tuple";
  case ast::ExprKind::If:
    return "an if expression";
  case ast::ExprKind::For:
    return "a loop";
  case ast::ExprKind::Error:
    return "an invalid expression";
  }
  return "an expression";
}

std::optional<Expr> to_symbolic(const ast::Expr& e, DimContext& ctx) {
  switch (e.kind) {
  case ast::ExprKind::Error:
    return fail();
  case ast::ExprKind::Int: {
    std::optional<int64_t> v = int_literal(e, false, ctx.diags);
    if (!v) return fail();
    return symbolic::Const::make(*v);
  }
  case ast::ExprKind::Bool:
    return symbolic::BoolConst::make(e.bool_value);
  case ast::ExprKind::Question:
    if (!ctx.fresh) {
      ctx.diags.error(e.loc, std::string("'?' is not allowed in ") + ctx.what)
          .notes.push_back({SourceLoc{}, "'?' stands for an anonymous dim in a type"});
      return fail();
    }
    return symbolic::Sym::make(anonymous_symbol_name((*ctx.fresh)++));
  case ast::ExprKind::Name:
    if (e.text.find('.') != std::string::npos) {
      ctx.diags.error(e.loc, "'" + e.text + "' cannot appear in " + ctx.what);
      return fail();
    }
    if (!is_symbol_name(e.text)) { // a function's name (keywords never reach here)
      ctx.diags.error(e.loc,
                      "'" + e.text + "' is a function, not a symbol; write " + e.text + "(a, b)");
      return fail();
    }
    return ctx.name(e.text, e.loc);
  case ast::ExprKind::Unary: {
    const ast::Expr& x = *e.operands[0];
    if (e.op == ast::Op::Neg && x.kind == ast::ExprKind::Int && !x.parenthesized) {
      // Only a literal right after the minus folds (symbolic/Syntax.h).
      std::optional<int64_t> v = int_literal(x, true, ctx.diags);
      if (!v) return fail();
      return symbolic::Const::make(*v);
    }
    std::optional<Expr> a = to_symbolic(x, ctx);
    if (!a) return fail();
    const symbolic::PrefixOperator* op = symbolic::prefix_operator(ast::op_spelling(e.op));
    internal_assert(op) << "'" << ast::op_spelling(e.op) << "' is not a prefix operator of dims";
    if (!check_operand(*a, op->operands, x, op->spelling, ctx)) return fail();
    return op->make(*a);
  }
  case ast::ExprKind::Binary: {
    std::optional<Expr> a = to_symbolic(*e.operands[0], ctx);
    std::optional<Expr> b = to_symbolic(*e.operands[1], ctx);
    if (!a || !b) return fail();
    const symbolic::InfixOperator& op = infix_operator(e.op);
    if (!check_operand(*a, op.operands, *e.operands[0], op.spelling, ctx) ||
        !check_operand(*b, op.operands, *e.operands[1], op.spelling, ctx)) {
      return fail();
    }
    return op.make(*a, *b);
  }
  case ast::ExprKind::Compare:
    return compare_chain(e, ctx);
  case ast::ExprKind::Call:
    return call(e, ctx);
  case ast::ExprKind::Float:
    ctx.diags.error(e.loc,
                    std::string(ctx.what) + " must be an integer expression; found a number");
    return fail();
  default:
    ctx.diags.error(e.loc, std::string(describe_expr(e)) + " cannot appear in " + ctx.what);
    return fail();
  }
}

std::optional<Expr> to_dim(const ast::Expr& e, DimContext& ctx) {
  std::optional<Expr> x = to_symbolic(e, ctx);
  if (!x) return fail();
  if (x->is_bool()) {
    ctx.diags.error(e.loc,
                    std::string(ctx.what) + " must be an integer expression; found a predicate");
    return fail();
  }
  return x;
}

std::optional<Expr> to_predicate(const ast::Expr& e, DimContext& ctx) {
  std::optional<Expr> x = to_symbolic(e, ctx);
  if (!x) return fail();
  if (!x->is_bool()) {
    ctx.diags.error(e.loc,
                    std::string(ctx.what) +
                        " must be a predicate, such as 'S >= 1'; found an integer expression");
    return fail();
  }
  return x;
}

bool is_anonymous_symbol_name(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "_d") return false;
  return std::all_of(name.begin() + 2, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string anonymous_symbol_name(int index) {
  return "_d" + std::to_string(index);
}

const char* dtype_alias(std::string_view name) {
  // The spellings of other frameworks map to ours.
  static const std::pair<const char*, const char*> kAliases[] = {
      {"float16", "f16"}, {"half", "f16"},    {"bfloat16", "bf16"}, {"float32", "f32"},
      {"float", "f32"},   {"float64", "f64"}, {"double", "f64"},    {"int8", "i8"},
      {"int32", "i32"},   {"int64", "i64"},   {"long", "i64"},      {"boolean", "bool"}};
  for (const auto& [alias, dtype] : kAliases)
    if (name == alias) return dtype;
  return nullptr;
}

void suggest_dtype(Diagnostic& d, std::string_view name) {
  if (const char* dtype = dtype_alias(name)) {
    d.notes.push_back({SourceLoc{}, std::string("did you mean '") + dtype + "'?"});
    return;
  }
  suggest(d, name, ir::dtype_names());
}

} // namespace dsc::lang
