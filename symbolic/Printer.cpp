#include "symbolic/Printer.h"

#include <ostream>
#include <string>
#include <string_view>

#include "support/Precedence.h"
#include "symbolic/Syntax.h"

namespace dsc::symbolic {

namespace {

using enum dsc::precedence::Level;

bool is_negation(const Expr& e) {
  const Mul* mul = e.as<Mul>();
  if (!mul) return false;
  const Const* c = mul->a.as<Const>();
  return c && c->value == -1;
}

class Printer {
public:
  std::string take() { return std::move(out_); }

  // Prints `e`, parenthesized when it binds looser than `min_prec`.
  void print(const Expr& e, int min_prec) {
    if (precedence(e) < min_prec) {
      out_ += '(';
      print(e, 0);
      out_ += ')';
      return;
    }
    switch (e.kind()) {
    case ExprKind::Const:
      out_ += std::to_string(e.as<Const>()->value);
      return;
    case ExprKind::BoolConst:
      out_ += bool_spelling(e.as<BoolConst>()->value);
      return;
    case ExprKind::Sym:
      out_ += e.as<Sym>()->name;
      return;
    case ExprKind::Min:
    case ExprKind::Max: {
      const auto* call = static_cast<const BinaryNode*>(e.get());
      out_ += function_name(e.kind());
      out_ += '(';
      print(call->a, 0);
      out_ += ", ";
      print(call->b, 0);
      out_ += ')';
      return;
    }
    case ExprKind::Not: {
      const Expr& a = e.as<Not>()->a;
      out_ += '!';
      print(a, precedence(a) == kAtom ? kAtom : kAtom + 1);
      return;
    }
    default:
      break;
    }
    if (is_negation(e)) {
      print_negation(e.as<Mul>()->b);
      return;
    }
    const auto* bin = static_cast<const BinaryNode*>(e.get());
    int prec = precedence(e);
    // Every infix operator associates to the left, so a right operand of the same precedence needs
    // parentheses; comparisons do not nest at all, since a nested one would chain.
    print(bin->a, prec == kCompare ? prec + 1 : prec);
    // Products are written tight (`2*S + 1`), so that the sums they sit in read at a glance.
    const bool spaced = prec != kMultiplicative;
    if (spaced) out_ += ' ';
    out_ += infix_spelling(e.kind());
    if (spaced) out_ += ' ';
    if (prec >= kAdditive) {
      print_after_operator(bin->b, prec + 1);
    } else {
      print(bin->b, prec + 1);
    }
  }

private:
  // `-x`. A nonnegative constant keeps its parentheses, because the parser folds `-3` into
  // Const(-3) and Mul(-1, 3) must stay distinct from it.
  void print_negation(const Expr& x) {
    out_ += '-';
    const Const* c = x.as<Const>();
    if (c && c->value >= 0) {
      out_ += '(';
      print(x, 0);
      out_ += ')';
      return;
    }
    print_after_operator(x, kUnary);
  }

  // An operand that follows an arithmetic operator gets parentheses when its text would begin with
  // a minus: `a - (-3)` and `a*(-n)` rather than `a - -3` and `a*-n`.
  void print_after_operator(const Expr& e, int min_prec) {
    size_t start = out_.size();
    print(e, min_prec);
    if (out_[start] != '-') return;
    out_.insert(start, 1, '(');
    out_ += ')';
  }

  std::string out_;
};

} // namespace

int precedence(const Expr& e) {
  switch (e.kind()) {
  case ExprKind::Const:
    return e.as<Const>()->value < 0 ? kUnary : kAtom;
  case ExprKind::Not:
    return kUnary;
  case ExprKind::Mul:
    return is_negation(e) ? kUnary : kMultiplicative;
  default:
    // Binary nodes by their operator; leaves, min and max are atoms.
    return dsc::precedence::infix_level(infix_spelling(e.kind()));
  }
}

std::string to_string(const Expr& e) {
  if (!e.defined()) return "<undefined>";
  Printer printer;
  printer.print(e, 0);
  return printer.take();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  return os << to_string(e);
}

} // namespace dsc::symbolic
