// Randomized property test of the symbolic library, in the manner of Halide's
// test/fuzz/simplify.cpp. Random expressions, biased toward the shapes the simplifier's rules
// target, are checked by evaluation:
//   - simplify(e) and simplify(e, facts) agree with e wherever e has a value (at bindings that
//     satisfy the facts),
//   - simplification is idempotent (the same hash-consed node comes back),
//   - Disproved counterexamples satisfy the facts and falsify the predicate, and Proved
//     predicates hold at random points that satisfy the facts,
//   - printing and parsing round-trip,
// and afterwards every simplifier rule must have fired, so that each one has been verified by
// evaluation at least once.
//
// The seed is fixed so that runs are reproducible; DSC_PROPERTY_SEED overrides it, and every
// failure message names the seed in use.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/FloorDiv.h"
#include "symbolic/Eval.h"
#include "symbolic/Expr.h"
#include "symbolic/Facts.h"
#include "symbolic/Parser.h"
#include "symbolic/Printer.h"
#include "symbolic/Prover.h"
#include "symbolic/Simplify.h"

namespace dsc::symbolic {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// How much work one run does; the check count is asserted at the end.
constexpr int kExpressions = 20000;
constexpr int kBindingsPerExpression = 4;
constexpr int kExpressionsPerFactSet = 6;
constexpr int kProverQueries = 2500;
constexpr int kProverZ3Budget = 80;    // queries allowed to reach Z3 ...
constexpr double kProverZ3Seconds = 4; // ... and the wall time they may take together
constexpr int kProvedSpotChecks = 50;
constexpr uint64_t kRequiredChecks = 100000;

uint64_t property_seed() {
  const char* text = std::getenv("DSC_PROPERTY_SEED");
  if (!text || !*text) return 20240601;
  return std::strtoull(text, nullptr, 0);
}

// A tiny deterministic generator; below() avoids std::uniform_int_distribution so that a seed
// means the same run with every standard library.
class Random {
public:
  explicit Random(uint64_t seed) : engine_(seed) {}

  uint64_t below(uint64_t n) { return engine_() % n; }
  int64_t in(int64_t lo, int64_t hi) { // inclusive, hi - lo < 2^63
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
  template <typename T, size_t N> const T& pick(const T (&items)[N]) { return items[below(N)]; }

private:
  std::mt19937_64 engine_;
};

const char* const kSymbols[] = {"a", "b", "c", "n", "S", "T"};
// `m` appears only in facts (`n == 2*m`), so bindings carry it too.
const char* const kBoundSymbols[] = {"a", "b", "c", "n", "S", "T", "m"};
const int64_t kSmallConstants[] = {-16, -7, -4, -3, -2, -1, 0,  0,  1,  1,  1,  2,  2,  3,
                                   4,   5,  7,  8,  11, 13, 15, 16, 17, 31, 32, 64, 100};
const int64_t kDivisors[] = {2, 2, 3, 4, 4, 5, 7, 8, 8, 16, 64};
const int64_t kHugeConstants[] = {int64_t{1} << 31, int64_t{1} << 40, int64_t{1} << 62, kMax, kMin,
                                  kMax - 1,         kMin + 1};

Expr num(int64_t v) {
  return Const::make(v);
}

// A value for a dimension: mostly small, sometimes 0..4, occasionally large.
int64_t random_dimension(Random& rng) {
  uint64_t r = rng.below(100);
  if (r < 65) return rng.in(0, 50);
  if (r < 85) return rng.in(0, 4);
  if (r < 95) return rng.in(0, 1000);
  if (r < 99) return rng.in(0, int64_t{1} << 31);
  return rng.in(0, int64_t{1} << 62);
}

Expr compare_op(Random& rng, Expr x, Expr y) {
  switch (rng.below(6)) {
  case 0:
    return EQ::make(std::move(x), std::move(y));
  case 1:
    return NE::make(std::move(x), std::move(y));
  case 2:
    return LT::make(std::move(x), std::move(y));
  case 3:
    return LE::make(std::move(x), std::move(y));
  case 4:
    return LT::make(std::move(y), std::move(x)); // x > y
  default:
    return LE::make(std::move(y), std::move(x)); // x >= y
  }
}

// Random expressions over kSymbols, built with the raw `make` constructors (nothing is
// simplified on the way), about a third of the inner nodes from shapes the rules target.
class ExprGenerator {
public:
  explicit ExprGenerator(Random& rng) : rng_(rng) {}

  Expr symbol() { return sym(rng_.pick(kSymbols)); }

  Expr constant() {
    if (rng_.chance(1)) return num(rng_.pick(kHugeConstants));
    return num(rng_.pick(kSmallConstants));
  }

  Expr leaf() { return rng_.chance(65) ? symbol() : constant(); }

  Expr integer(int depth) {
    if (depth <= 0 || rng_.chance(20)) return leaf();
    if (rng_.chance(35)) return shaped(depth);
    Expr x = integer(depth - 1);
    Expr y = integer(depth - 1);
    switch (rng_.below(10)) {
    case 0:
    case 1:
      return Add::make(x, y);
    case 2:
      return Sub::make(x, y);
    case 3:
      return Mul::make(x, rng_.chance(50) ? y : constant());
    case 4:
      return FloorDiv::make(x, rng_.chance(60) ? constant() : y);
    case 5:
      return FloorMod::make(x, rng_.chance(60) ? constant() : y);
    case 6:
      return Min::make(x, y);
    case 7:
      return Max::make(x, y);
    case 8:
      return Mul::make(num(-1), x); // unary minus, as the parser builds it
    default:
      return Mul::make(x, y);
    }
  }

  Expr predicate(int depth) {
    if (depth <= 0 || rng_.chance(30)) return comparison(depth);
    switch (rng_.below(8)) {
    case 0:
    case 1: {
      Expr p = predicate(depth - 1);
      return And::make(p, predicate(depth - 1));
    }
    case 2:
    case 3: {
      Expr p = predicate(depth - 1);
      return Or::make(p, predicate(depth - 1));
    }
    case 4:
      return Not::make(predicate(depth - 1));
    case 5: {
      // p && !p, p || !p, p && p.
      Expr p = predicate(depth - 1);
      switch (rng_.below(3)) {
      case 0:
        return And::make(p, Not::make(p));
      case 1:
        return Or::make(Not::make(p), p);
      default:
        return And::make(p, p);
      }
    }
    case 6: {
      Expr p = predicate(depth - 1);
      Expr k = BoolConst::make(rng_.chance(50));
      return rng_.chance(50) ? And::make(p, k) : Or::make(k, p);
    }
    default:
      return comparison(depth);
    }
  }

private:
  int64_t divisor() { return rng_.pick(kDivisors); }
  int64_t small() { return rng_.pick(kSmallConstants); }

  // A divisor that is never zero when symbols are >= 0 (sometimes only under facts).
  Expr nonzero_divisor(int depth) {
    switch (rng_.below(4)) {
    case 0: {
      Expr x = integer(depth);
      return Add::make(x, num(1 + static_cast<int64_t>(rng_.below(3))));
    }
    case 1:
      return Max::make(symbol(), num(1));
    case 2:
      return symbol(); // nonzero where facts say `1 <= S`
    default:
      return integer(depth);
    }
  }

  // A monomial-like divisor for (m*q)/m.
  Expr monomial() {
    switch (rng_.below(4)) {
    case 0:
      return symbol();
    case 1:
      return Max::make(symbol(), num(1));
    case 2: {
      int64_t c = divisor();
      return Mul::make(num(c), Max::make(symbol(), num(1)));
    }
    default: {
      Expr x = symbol();
      return Mul::make(x, Max::make(symbol(), num(1)));
    }
    }
  }

  Expr min_or_max(bool is_min, Expr x, Expr y) {
    return is_min ? Min::make(std::move(x), std::move(y)) : Max::make(std::move(x), std::move(y));
  }

  Expr div_or_mod(bool is_div, Expr x, Expr y) {
    return is_div ? FloorDiv::make(std::move(x), std::move(y))
                  : FloorMod::make(std::move(x), std::move(y));
  }

  Expr shaped(int depth) {
    Expr x = integer(depth - 1);
    Expr y = integer(depth - 1);
    int64_t c = divisor(), c2 = divisor(), k = small();
    bool flag = rng_.chance(50);
    switch (rng_.below(25)) {
    case 0: // (c*x + k) / c, (c*x + k) % c
      return div_or_mod(flag, Add::make(Mul::make(num(c), x), num(k)), num(c));
    case 1: // x / c1 / c2
      return FloorDiv::make(FloorDiv::make(x, num(c)), num(flag ? c2 : -c2));
    case 2: { // (x % c1) % c2, often with c2 | c1, sometimes c1 < c2
      int64_t c1 = flag ? c2 * static_cast<int64_t>(1 + rng_.below(4)) : c;
      return FloorMod::make(FloorMod::make(x, num(c1)), num(c2));
    }
    case 3: // x / c * c
      return Mul::make(FloorDiv::make(x, num(c)), num(c));
    case 4: // (x + 15) / 16 * 16
      return Mul::make(FloorDiv::make(Add::make(x, num(c - 1)), num(c)), num(c));
    case 5: { // k*y / y, k*y % y
      Expr d = nonzero_divisor(depth - 1);
      return div_or_mod(flag, Mul::make(num(k), d), d);
    }
    case 6: { // (m*q) / m, (m*q) % m
      Expr m = monomial();
      return div_or_mod(flag, rng_.chance(50) ? Mul::make(m, x) : Mul::make(x, m), m);
    }
    case 7: // min(x + c1, x + c2)
      return min_or_max(flag, Add::make(x, num(k)), Add::make(x, num(small())));
    case 8: // negative divisors
      return div_or_mod(flag, x, num(-c));
    case 9: // division by zero
      return div_or_mod(flag, x, num(0));
    case 10: // (g*x + g*k) / (g*c)
      return div_or_mod(flag, Add::make(Mul::make(num(c), x), num(c * k)), num(c * c2));
    case 11: // min(min(x, c1), c2)
      return min_or_max(flag, min_or_max(flag, x, num(k)), num(small()));
    case 12: // min(c, x)
      return min_or_max(flag, num(k), x);
    case 13: // min(x + c, y + c)
      return min_or_max(flag, Add::make(x, num(k)), Add::make(y, num(k)));
    case 14: // (x % c) / (c*j): bounds decide the quotient
      return FloorDiv::make(FloorMod::make(x, num(c)),
                            num(c * static_cast<int64_t>(1 + rng_.below(2))));
    case 15: // min(c*j*x, c*j*y) % c: divisibility decides
      return FloorMod::make(min_or_max(flag, Mul::make(num(c * c2), x), Mul::make(num(c), y)),
                            num(c));
    case 16: // constant folding of div/mod, including negative operands
      return div_or_mod(flag, num(k), num(small()));
    case 17: // 0 / x, 0 % x
      return div_or_mod(flag, num(0), y);
    case 18: // x / c + x % c and c*(x/c) + x % c
      return Add::make(Mul::make(num(flag ? c : 1), FloorDiv::make(x, num(c))),
                       FloorMod::make(x, num(c)));
    case 19: // x - x, -(x - y)
      return flag ? Sub::make(x, x) : Mul::make(num(-1), Sub::make(x, y));
    case 20: // min(x, x), min(y, x) with nonneg bounds
      return min_or_max(flag, x, rng_.chance(50) ? x : Add::make(x, num(k)));
    case 21: // x % c where x is bounded below c
      return FloorMod::make(FloorMod::make(x, num(c)), num(c * 2 + 1));
    case 22: // (x % c) == 0 style residues through div: (c*x + k) / c / c2
      return FloorDiv::make(Add::make(Mul::make(num(c * c2), x), num(k)), num(c));
    case 23: { // a*((x/a)%b) + x%a: a, b constants (negative or zero too) or symbols
      const auto radix = [&](int64_t c0) {
        if (rng_.chance(40)) return symbol();
        return num(rng_.chance(70) ? c0 : rng_.chance(50) ? -c0 : 0);
      };
      Expr a = radix(c), b = radix(c2);
      return Add::make(Mul::make(a, FloorMod::make(FloorDiv::make(x, a), b)), FloorMod::make(x, a));
    }
    default: { // c*x*m / m with a constant coefficient
      Expr m = monomial();
      return div_or_mod(flag, Mul::make(num(c), Mul::make(x, m)), m);
    }
    }
  }

  Expr comparison(int depth) {
    int d = depth > 0 ? depth - 1 : 0;
    Expr x = integer(d);
    if (rng_.chance(60)) return compare_op(rng_, x, integer(d));
    int64_t c = divisor(), k = small();
    switch (rng_.below(10)) {
    case 8: { // s1*s2*k1 vs s1*s2*s3*k2: a shared monomial times something of known sign
      Expr s1 = symbol(), s2 = symbol(), s3 = symbol();
      Expr m = Mul::make(s1, s2);
      return compare_op(rng_, Mul::make(m, num(c)), Mul::make(Mul::make(m, s3), num(k)));
    }
    case 0: // (x + c - 1) / c * c >= x
      return compare_op(rng_, Mul::make(FloorDiv::make(Add::make(x, num(c - 1)), num(c)), num(c)),
                        x);
    case 1: // x / c * c <= x
      return compare_op(rng_, Mul::make(FloorDiv::make(x, num(c)), num(c)), x);
    case 2: // g*x == k
      return compare_op(rng_, Mul::make(num(c), x), num(k));
    case 3: // x + k == 0 for x >= 0
      return compare_op(rng_, Add::make(symbol(), num(k)), num(0));
    case 4: { // min(2*a, 2*b) - 2*c + 1 == 0: odd, never zero
      Expr s1 = symbol(), s2 = symbol(), s3 = symbol();
      Expr sum =
          Sub::make(Min::make(Mul::make(num(c), s1), Mul::make(num(c), s2)), Mul::make(num(c), s3));
      return compare_op(rng_, Add::make(sum, num(k)), num(0));
    }
    case 5: // x % c < c
      return compare_op(rng_, FloorMod::make(x, num(c)), num(k));
    case 6: // x vs x + k
      return compare_op(rng_, x, Add::make(x, num(k)));
    case 7: // comparisons at the ends of int64, where moving terms across can overflow
      if (rng_.chance(50)) x = symbol();
      return compare_op(rng_, x, num(rng_.pick(kHugeConstants)));
    default: // n*4/2 == 2*n
      return compare_op(rng_, FloorDiv::make(Mul::make(x, num(c * 2)), num(2)),
                        Mul::make(num(c), x));
    }
  }

  Random& rng_;
};

// A random set of facts, and how to build bindings that satisfy it. Bindings are built by
// construction where that is easy (ranges, residues, equalities) and then checked against every
// predicate by evaluation, so a binding never relies on the library's reading of the facts.
struct FactSet {
  struct Range {
    std::string symbol;
    int64_t lo, hi;
  };
  struct Residue {
    std::string symbol;
    int64_t modulus, remainder;
  };
  struct Equality {
    std::string symbol;
    Expr value;
  };

  Facts facts;
  std::vector<std::string> texts;
  std::vector<Range> ranges;
  std::vector<Residue> residues;
  std::vector<Equality> equalities;

  std::string describe() const {
    std::string out;
    for (const std::string& t : texts) {
      if (!out.empty()) out += ", ";
      out += t;
    }
    return out.empty() ? "(none)" : out;
  }
};

FactSet random_facts(Random& rng) {
  FactSet fs;
  auto add = [&](const std::string& text) {
    ParseResult r = parse_predicate(text);
    internal_assert(r.ok()) << "bad fact " << text << ": " << r.error.message;
    fs.facts.add(r.expr);
    fs.texts.push_back(text);
  };
  const char* const range_symbols[] = {"a", "b", "c", "n", "S", "S", "T", "m"};
  const char* const eq_targets[] = {"T", "n", "c"};
  size_t count = 1 + rng.below(3);
  for (size_t i = 0; i < count; ++i) {
    switch (rng.below(7)) {
    case 0:
    case 1: { // 1 <= S <= 64 and one-sided variants
      std::string s = rng.pick(range_symbols);
      const int64_t los[] = {0, 1, 1, 2, 4, 8};
      const int64_t his[] = {1, 4, 8, 16, 64, 512, kMax};
      int64_t lo = rng.pick(los), hi = rng.pick(his);
      if (hi < lo) std::swap(lo, hi);
      switch (rng.below(4)) {
      case 0:
        add(std::to_string(lo) + " <= " + s + " <= " + std::to_string(hi));
        break;
      case 1:
        add(s + " >= " + std::to_string(lo));
        hi = kMax;
        break;
      case 2:
        add(std::to_string(lo - 1) + " < " + s);
        hi = kMax;
        break;
      default:
        if (hi == kMax) hi = 100;
        add(s + " < " + std::to_string(hi + 1));
        lo = 0;
        break;
      }
      fs.ranges.push_back({s, lo, hi});
      break;
    }
    case 2: { // S % 8 == 0
      std::string s = rng.pick(range_symbols);
      int64_t k = rng.pick(kDivisors);
      int64_t r = rng.chance(60) ? 0 : rng.in(0, k - 1);
      add(s + " % " + std::to_string(k) + " == " + std::to_string(r));
      fs.residues.push_back({s, k, r});
      break;
    }
    case 3: { // T == S, n == 2*m, c == a + 1, ...
      std::string s = rng.pick(eq_targets);
      const char* const values[] = {"S", "2*m", "4*m", "a + 1", "2*a + b", "S + T", "m"};
      std::string v = rng.pick(values);
      add(s + " == " + v);
      fs.equalities.push_back({s, parse_expr(v).expr});
      break;
    }
    default: { // facts about compound expressions
      const char* const compound[] = {"a + b >= 1",   "a <= b",      "T <= S",
                                      "S - T >= 2",   "a + b <= 10", "a*b >= 1",
                                      "2*a + 1 <= b", "n + S >= 1",  "S != 0"};
      add(rng.pick(compound));
      break;
    }
    }
  }
  return fs;
}

// Bindings of every symbol that satisfy all of fs's predicates, or nullopt when a few tries find
// none (the facts may well be contradictory).
std::optional<Bindings> bind(const FactSet& fs, Random& rng) {
  for (int attempt = 0; attempt < 40; ++attempt) {
    Bindings at;
    for (const char* s : kBoundSymbols)
      at[s] = random_dimension(rng);
    for (const FactSet::Range& r : fs.ranges) {
      int64_t& v = at[r.symbol];
      if (v < r.lo || v > r.hi) v = rng.in(r.lo, std::min(r.hi, r.lo + 64));
    }
    for (const FactSet::Residue& r : fs.residues) {
      int64_t& v = at[r.symbol];
      v = v - floor_mod(v, r.modulus) + r.remainder;
    }
    bool ok = true;
    for (const FactSet::Equality& e : fs.equalities) {
      std::optional<int64_t> v = eval(e.value, at);
      if (!v)
        ok = false;
      else
        at[e.symbol] = *v;
    }
    if (!ok) continue;
    for (const Expr& p : fs.facts.predicates()) {
      std::optional<int64_t> v = eval(p, at);
      if (!v || *v != 1) ok = false;
    }
    for (const auto& [name, value] : at)
      ok &= value >= 0;
    if (ok) return at;
  }
  return std::nullopt;
}

std::string describe(const Bindings& at) {
  std::string out;
  for (const auto& [name, value] : at) {
    if (!out.empty()) out += ", ";
    out += name;
    out += '=';
    out += std::to_string(value);
  }
  return out;
}

std::string show(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : std::string("no value");
}

// Counts checks and failures; shows the first few failures of each kind in full. The detail
// is a callable, so that the message is only built for a failure.
class Checker {
public:
  explicit Checker(uint64_t seed) : seed_(seed) {}

  template <typename Detail> void check(bool ok, const char* kind, const Detail& detail) {
    ++checks_;
    if (ok) return;
    ++failures_;
    int& shown = shown_[kind];
    if (shown++ >= 8) return;
    ADD_FAILURE() << "[" << kind << "] " << detail() << "\n  (DSC_PROPERTY_SEED=" << seed_ << ")";
  }

  uint64_t checks() const { return checks_; }
  uint64_t failures() const { return failures_; }

private:
  uint64_t seed_;
  uint64_t checks_ = 0;
  uint64_t failures_ = 0;
  std::map<std::string, int> shown_;
};

// e and its simplification s agree at `at`, wherever e has a value. When s has no value there
// although e has one (a product expanded into terms that overflow), nothing is checked.
void check_agrees(Checker& checker, const Expr& e, const Expr& s, const Bindings& at,
                  const char* kind, const std::string& context, uint64_t* skipped) {
  std::optional<int64_t> expected = eval(e, at);
  if (!expected) {
    ++*skipped;
    return;
  }
  std::optional<int64_t> got = eval(s, at);
  if (!got) {
    ++*skipped;
    return;
  }
  checker.check(*got == *expected, kind, [&] {
    return to_string(e) + "\n  simplified" + context + ": " + to_string(s) + "\n  at " +
           describe(at) + "\n  expected " + show(expected) + ", got " + show(got);
  });
}

void check_round_trip(Checker& checker, const Expr& e) {
  std::string text = to_string(e);
  ParseResult r = parse_expr(text);
  checker.check(r.ok() && r.expr.same_as(e), "print/parse round trip", [&] {
    std::ostringstream why;
    why << "'" << text << "' reparses as ";
    if (r.ok())
      why << "'" << r.expr << "'";
    else
      why << "an error: " << r.error.message;
    return why.str();
  });
}

struct PhaseTimer {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

TEST(SymbolicProperty, RandomizedChecks) {
  const uint64_t seed = property_seed();
  SCOPED_TRACE("DSC_PROPERTY_SEED=" + std::to_string(seed));
  std::cout << "DSC_PROPERTY_SEED=" << seed << "\n";
  Random rng(seed);
  ExprGenerator gen(rng);
  Checker checker(seed);
  uint64_t skipped = 0, unbindable = 0;
  PhaseTimer total;

  // (b) simplify agrees with eval, with and without facts; (c) idempotence; (f) round trips.
  FactSet fs = random_facts(rng);
  for (int i = 0; i < kExpressions; ++i) {
    if (i % kExpressionsPerFactSet == 0) fs = random_facts(rng);
    int depth = 1 + static_cast<int>(rng.below(4));
    Expr e = rng.chance(30) ? gen.predicate(depth) : gen.integer(depth);
    Expr s = simplify(e);

    for (int j = 0; j < kBindingsPerExpression; ++j) {
      Bindings at;
      for (const char* name : kBoundSymbols)
        at[name] = random_dimension(rng);
      check_agrees(checker, e, s, at, "simplify(e) == e", "", &skipped);
    }

    Expr again = simplify(s);
    checker.check(again.same_as(s), "idempotence", [&] {
      return to_string(e) + "\n  simplify once:  " + to_string(s) +
             "\n  simplify twice: " + to_string(again);
    });

    check_round_trip(checker, e);
    check_round_trip(checker, s);
    ParseResult reparsed = parse_expr(to_string(s));
    if (reparsed.ok()) {
      Expr s2 = simplify(reparsed.expr);
      checker.check(s2.same_as(s), "canonical text resimplifies to itself", [&] {
        return to_string(e) + "\n  canonical: " + to_string(s) +
               "\n  reparsed and simplified: " + to_string(s2);
      });
    }

    Expr sf = simplify(e, fs.facts);
    check_round_trip(checker, sf);
    Expr sf_again = simplify(sf, fs.facts);
    checker.check(sf_again.same_as(sf), "idempotence under facts", [&] {
      return to_string(e) + "\n  facts: " + fs.describe() + "\n  simplify once:  " + to_string(sf) +
             "\n  simplify twice: " + to_string(sf_again);
    });
    for (int j = 0; j < kBindingsPerExpression; ++j) {
      std::optional<Bindings> at = bind(fs, rng);
      if (!at) {
        ++unbindable;
        break;
      }
      check_agrees(checker, e, sf, *at, "simplify(e, facts) == e", " under " + fs.describe(),
                   &skipped);
    }
  }
  double simplify_seconds = total.seconds();
  uint64_t simplify_checks = checker.checks();

  // (d) Prover verdicts hold up under evaluation.
  Prover z3_prover(ProverOptions{200, true, true});
  Prover fast_prover(ProverOptions{200, false, true});
  double z3_seconds = 0;
  uint64_t verdicts[3] = {0, 0, 0};
  for (int i = 0; i < kProverQueries; ++i) {
    FactSet pfs = random_facts(rng);
    Expr p = gen.predicate(1 + static_cast<int>(rng.below(2)));
    bool use_z3 = z3_prover.stats().z3_calls < kProverZ3Budget && z3_seconds < kProverZ3Seconds;
    PhaseTimer t;
    ProofResult r = (use_z3 ? z3_prover : fast_prover).prove(p, pfs.facts);
    if (use_z3) z3_seconds += t.seconds();
    ++verdicts[static_cast<int>(r.verdict)];
    auto query = [&] { return to_string(p) + "\n  facts: " + pfs.describe(); };
    if (r.verdict == Verdict::Disproved) {
      for (const Expr& f : pfs.facts.predicates()) {
        std::optional<int64_t> v = eval(f, r.counterexample);
        checker.check(v && *v == 1, "counterexample satisfies the facts", [&] {
          return query() + "\n  counterexample " + describe(r.counterexample) + " (stage " +
                 stage_name(r.stage) + ") gives fact " + to_string(f) + " = " + show(v);
        });
      }
      std::optional<int64_t> v = eval(p, r.counterexample);
      checker.check(v && *v == 0, "counterexample falsifies the predicate", [&] {
        return query() + "\n  counterexample " + describe(r.counterexample) + " (stage " +
               stage_name(r.stage) + ") gives " + show(v);
      });
    }
    if (r.verdict == Verdict::Proved) {
      for (int j = 0; j < kProvedSpotChecks; ++j) {
        std::optional<Bindings> at = bind(pfs, rng);
        if (!at) {
          ++unbindable;
          break;
        }
        std::optional<int64_t> v = eval(p, *at);
        if (!v) {
          ++skipped;
          continue;
        }
        checker.check(*v == 1, "proved predicate holds", [&] {
          return query() + "\n  proved (stage " + stage_name(r.stage) + ") but false at " +
                 describe(*at);
        });
      }
    }
  }

  std::cout << "checks: " << checker.checks() << " (" << simplify_checks
            << " simplify/idempotence/round-trip in " << simplify_seconds << " s, "
            << checker.checks() - simplify_checks << " prover), skipped " << skipped
            << " evaluations without a value, " << unbindable
            << " fact sets with no satisfying binding found\n"
            << "prover: " << verdicts[0] << " proved, " << verdicts[1] << " disproved, "
            << verdicts[2] << " unknown; " << z3_prover.stats().z3_calls << " Z3 calls in "
            << z3_seconds << " s; total " << total.seconds() << " s\n";

  // (e) Every rule fired, and so was checked by evaluation above.
  std::cout << "simplifier rule counts:\n";
  for (const auto& [rule, count] : simplifier_rule_counts()) {
    std::cout << "  " << count << "\t" << rule << "\n";
    EXPECT_GT(count, 0u) << "rule never fired, so never verified: " << rule;
  }

  EXPECT_EQ(checker.failures(), 0u) << "DSC_PROPERTY_SEED=" << seed;
  EXPECT_GE(checker.checks(), kRequiredChecks);
}

} // namespace
} // namespace dsc::symbolic
