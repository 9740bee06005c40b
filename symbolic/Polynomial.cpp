#include "symbolic/Polynomial.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace dsc::symbolic {

bool Monomial::operator==(const Monomial& other) const {
  if (factors.size() != other.factors.size()) return false;
  for (size_t i = 0; i < factors.size(); ++i)
    if (!factors[i].same_as(other.factors[i])) return false;
  return true;
}

int compare(const Monomial& a, const Monomial& b) {
  if (a.factors.size() != b.factors.size()) return a.factors.size() > b.factors.size() ? -1 : 1;
  for (size_t i = 0; i < a.factors.size(); ++i)
    if (int c = compare(a.factors[i], b.factors[i])) return c;
  return 0;
}

namespace {

bool checked_add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
bool checked_mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// a % b == 0 without the INT64_MIN % -1 trap; b != 0.
bool divisible(int64_t a, int64_t b) { return b == -1 || a % b == 0; }

Monomial multiply(const Monomial& a, const Monomial& b) {
  Monomial m;
  m.factors.reserve(a.factors.size() + b.factors.size());
  std::merge(a.factors.begin(), a.factors.end(), b.factors.begin(), b.factors.end(),
             std::back_inserter(m.factors), ExprLess());
  return m;
}

// Removes b's factors from a (as multisets); false when b is not contained in a.
bool divide(const Monomial& a, const Monomial& b, Monomial* quotient) {
  quotient->factors.clear();
  size_t j = 0;
  for (const Expr& f : a.factors) {
    if (j < b.factors.size() && f.same_as(b.factors[j])) {
      ++j;
      continue;
    }
    quotient->factors.push_back(f);
  }
  return j == b.factors.size();
}

Expr product_expr(int64_t coeff, const Monomial& m) {
  Expr e;
  if (coeff != 1) e = Const::make(coeff);
  for (const Expr& f : m.factors) e = e.defined() ? Mul::make(e, f) : f;
  return e;
}

} // namespace

Polynomial Polynomial::invalid() {
  Polynomial p;
  p.ok_ = false;
  return p;
}

Polynomial Polynomial::constant(int64_t value) {
  Polynomial p;
  p.constant_ = value;
  return p;
}

Polynomial Polynomial::atom(const Expr& factor) {
  Polynomial p;
  p.terms_.push_back(Term{Monomial{{factor}}, 1});
  return p;
}

Polynomial Polynomial::from_expr(const Expr& e) {
  if (const Const* c = e.as<Const>()) return constant(c->value);
  if (const Add* add = e.as<Add>()) return from_expr(add->a) + from_expr(add->b);
  if (const Sub* sub = e.as<Sub>()) return from_expr(sub->a) - from_expr(sub->b);
  if (const Mul* mul = e.as<Mul>()) return from_expr(mul->a) * from_expr(mul->b);
  return atom(e);
}

const Expr* Polynomial::as_atom() const {
  if (!ok_ || constant_ != 0 || terms_.size() != 1) return nullptr;
  const Term& t = terms_[0];
  if (t.coeff != 1 || t.monomial.factors.size() != 1) return nullptr;
  return &t.monomial.factors[0];
}

int64_t Polynomial::content() const {
  int64_t g = 0;
  for (const Term& t : terms_) {
    // |INT64_MIN| does not fit; a coefficient that large is not worth factoring.
    if (t.coeff == std::numeric_limits<int64_t>::min()) return 1;
    g = std::gcd(g, t.coeff < 0 ? -t.coeff : t.coeff);
  }
  return g;
}

void Polynomial::add_term(Monomial m, int64_t coeff) {
  if (coeff == 0) return;
  auto it = std::lower_bound(terms_.begin(), terms_.end(), m, [](const Term& t, const Monomial& k) {
    return compare(t.monomial, k) < 0;
  });
  if (it != terms_.end() && it->monomial == m) {
    if (!checked_add(it->coeff, coeff, &it->coeff)) {
      ok_ = false;
      return;
    }
    if (it->coeff == 0) terms_.erase(it);
    return;
  }
  terms_.insert(it, Term{std::move(m), coeff});
}

Polynomial Polynomial::operator+(const Polynomial& other) const {
  if (!ok_ || !other.ok_) return invalid();
  Polynomial p = *this;
  for (const Term& t : other.terms_) p.add_term(t.monomial, t.coeff);
  if (!checked_add(p.constant_, other.constant_, &p.constant_)) return invalid();
  if (!p.ok_) return invalid();
  return p;
}

Polynomial Polynomial::operator-(const Polynomial& other) const { return *this + other.negated(); }

Polynomial Polynomial::scaled(int64_t k) const {
  if (!ok_) return invalid();
  if (k == 0) return constant(0);
  Polynomial p = *this;
  for (Term& t : p.terms_)
    if (!checked_mul(t.coeff, k, &t.coeff)) return invalid();
  if (!checked_mul(p.constant_, k, &p.constant_)) return invalid();
  return p;
}

Polynomial Polynomial::divided_exactly(int64_t k) const {
  internal_assert(k != 0) << "division of a polynomial by zero";
  Polynomial p = *this;
  if (k == -1) return negated();
  for (Term& t : p.terms_) {
    internal_assert(divisible(t.coeff, k)) << "inexact polynomial division";
    t.coeff /= k;
  }
  internal_assert(divisible(p.constant_, k)) << "inexact polynomial division";
  p.constant_ /= k;
  return p;
}

Polynomial Polynomial::without_constant() const {
  Polynomial p = *this;
  p.constant_ = 0;
  return p;
}

Polynomial Polynomial::operator*(const Polynomial& other) const {
  if (!ok_ || !other.ok_) return invalid();
  Polynomial p = constant(0);
  if (!checked_mul(constant_, other.constant_, &p.constant_)) return invalid();
  for (const Term& a : terms_) {
    int64_t c = 0;
    if (!checked_mul(a.coeff, other.constant_, &c)) return invalid();
    p.add_term(a.monomial, c);
    for (const Term& b : other.terms_) {
      if (!checked_mul(a.coeff, b.coeff, &c)) return invalid();
      p.add_term(multiply(a.monomial, b.monomial), c);
    }
  }
  for (const Term& b : other.terms_) {
    int64_t c = 0;
    if (!checked_mul(b.coeff, constant_, &c)) return invalid();
    p.add_term(b.monomial, c);
  }
  if (!p.ok_) return invalid();
  return p;
}

bool Polynomial::is_multiple_of(const Polynomial& other, int64_t* k) const {
  if (!ok_ || !other.ok_ || other.is_zero()) return false;
  if (terms_.size() != other.terms_.size()) return false;
  int64_t ratio = 0;
  if (!other.terms_.empty()) {
    const Term& lead = terms_[0];
    const Term& other_lead = other.terms_[0];
    if (!(lead.monomial == other_lead.monomial) || !divisible(lead.coeff, other_lead.coeff) ||
        __builtin_mul_overflow(lead.coeff / (other_lead.coeff == -1 ? 1 : other_lead.coeff),
                               other_lead.coeff == -1 ? -1 : 1, &ratio))
      return false;
  } else {
    if (!divisible(constant_, other.constant_) ||
        __builtin_mul_overflow(constant_ / (other.constant_ == -1 ? 1 : other.constant_),
                               other.constant_ == -1 ? -1 : 1, &ratio))
      return false;
  }
  Polynomial scaled_other = other.scaled(ratio);
  if (!scaled_other.ok_) return false;
  Polynomial diff = *this - scaled_other;
  if (!diff.ok_ || !diff.is_zero()) return false;
  *k = ratio;
  return true;
}

bool Polynomial::divide_by_monomial(const Polynomial& divisor, Polynomial* quotient) const {
  if (!ok_ || !divisor.ok_ || constant_ != 0) return false;
  if (divisor.constant_ != 0 || divisor.terms_.size() != 1) return false;
  const Term& d = divisor.terms_[0];
  Polynomial q;
  for (const Term& t : terms_) {
    Monomial m;
    if (!divide(t.monomial, d.monomial, &m) || !divisible(t.coeff, d.coeff)) return false;
    int64_t c = 0;
    if (__builtin_mul_overflow(t.coeff / (d.coeff == -1 ? 1 : d.coeff), d.coeff == -1 ? -1 : 1, &c))
      return false;
    if (m.factors.empty())
      q.constant_ = c; // only one term can have exactly the divisor's monomial
    else
      q.add_term(std::move(m), c);
  }
  if (!q.ok_) return false;
  *quotient = std::move(q);
  return true;
}

void Polynomial::split_by_sign(Polynomial* positive, Polynomial* negative) const {
  *positive = Polynomial();
  *negative = Polynomial();
  for (const Term& t : terms_) {
    if (t.coeff > 0)
      positive->terms_.push_back(t);
    else
      negative->terms_.push_back(Term{t.monomial, -t.coeff});
  }
  if (constant_ > 0) positive->constant_ = constant_;
  if (constant_ < 0) negative->constant_ = -constant_;
}

Expr Polynomial::to_expr() const {
  internal_assert(ok_) << "to_expr() of an overflowed polynomial";
  Expr e;
  for (const Term& t : terms_) {
    if (t.coeff <= 0) continue;
    Expr term = product_expr(t.coeff, t.monomial);
    e = e.defined() ? Add::make(e, term) : term;
  }
  for (const Term& t : terms_) {
    if (t.coeff >= 0) continue;
    if (!e.defined()) {
      e = product_expr(t.coeff, t.monomial);
    } else if (t.coeff == std::numeric_limits<int64_t>::min()) {
      e = Add::make(e, product_expr(t.coeff, t.monomial));
    } else {
      e = Sub::make(e, product_expr(-t.coeff, t.monomial));
    }
  }
  if (!e.defined()) return Const::make(constant_);
  if (constant_ > 0) return Add::make(e, Const::make(constant_));
  if (constant_ < 0 && constant_ != std::numeric_limits<int64_t>::min())
    return Sub::make(e, Const::make(-constant_));
  if (constant_ < 0) return Add::make(e, Const::make(constant_));
  return e;
}

} // namespace dsc::symbolic
