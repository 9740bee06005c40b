#pragma once
// Sum-of-products arithmetic behind the canonical form (see Simplify.h):
//   sum_i coeff_i * (f_i1 * f_i2 * ...) + constant
// The factors are canonical atoms (symbols, and floordiv/floormod/min/max of canonical
// operands), kept sorted so that equal monomials compare equal. Coefficients are int64; an
// operation that would overflow marks the polynomial not ok() instead of wrapping.

#include <cstdint>
#include <vector>

#include "symbolic/Expr.h"

namespace dsc::symbolic {

struct Monomial {
  std::vector<Expr> factors; // sorted by ExprLess, repeated for powers; never empty in a Term
  bool operator==(const Monomial& other) const;
};
// Higher degree first, then lexicographic by factor.
int compare(const Monomial& a, const Monomial& b);

struct Term {
  Monomial monomial;
  int64_t coeff = 0;
};

class Polynomial {
public:
  Polynomial() = default;
  static Polynomial constant(int64_t value);
  static Polynomial atom(const Expr& factor);
  // Reads back any Expr made of Add/Sub/Mul over constants and atoms (everything else is an
  // atom). Used on canonical expressions, whose atoms are canonical already.
  static Polynomial from_expr(const Expr& e);

  bool ok() const { return ok_; }
  bool is_constant() const { return terms_.empty(); }
  bool is_zero() const { return terms_.empty() && constant_ == 0; }
  int64_t constant_term() const { return constant_; }
  const std::vector<Term>& terms() const { return terms_; }

  // The single atom with coefficient 1 and no constant, if the polynomial is just that.
  const Expr* as_atom() const;
  // Greatest common divisor of the term coefficients (0 when there are no terms).
  int64_t content() const;

  Polynomial operator+(const Polynomial& other) const;
  Polynomial operator-(const Polynomial& other) const;
  Polynomial operator*(const Polynomial& other) const;
  Polynomial negated() const { return scaled(-1); }
  Polynomial scaled(int64_t k) const;
  // Exact division of every coefficient and the constant by k (callers check divisibility).
  Polynomial divided_exactly(int64_t k) const;
  // The terms without the constant.
  Polynomial without_constant() const;

  // If this == k * other for an integer k, returns k (other must not be zero).
  bool is_multiple_of(const Polynomial& other, int64_t* k) const;
  // If every term is divisible by the single-term polynomial `divisor` (monomial and
  // coefficient), and there is no constant, the quotient.
  bool divide_by_monomial(const Polynomial& divisor, Polynomial* quotient) const;

  // The canonical Expr: positive terms first, then negative ones, then the constant.
  Expr to_expr() const;
  // Positive and negative parts: this == positive - negative, both with nonnegative
  // coefficients (the constant goes to whichever side makes it positive).
  void split_by_sign(Polynomial* positive, Polynomial* negative) const;

private:
  static Polynomial invalid();
  void add_term(Monomial m, int64_t coeff); // keeps terms_ sorted and merged

  std::vector<Term> terms_; // sorted by compare(Monomial), no zero coefficients
  int64_t constant_ = 0;
  bool ok_ = true;
};

} // namespace dsc::symbolic
