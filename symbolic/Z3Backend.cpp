#include "symbolic/Z3Backend.h"

#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include "support/Assert.h"

namespace dsc::symbolic {

namespace {

// A fixed seed, and a fresh context per query (below): an answer is a function of the question
// alone, not of the questions the thread asked before, nor of the machine's load (the resource
// count, not time, bounds it). A context costs about 0.5 ms to build; 1 query in 75 of the
// compiler's reaches Z3 (bench/symbolic).
constexpr unsigned kRandomSeed = 0;

using Clock = std::chrono::steady_clock;

// Enforces the per-query time limit by interrupting the context of a query that runs past its
// deadline. Z3's own "timeout" parameter is not used: in Z3 4.8.10 to 4.8.12 (Debian ships
// 4.8.12) its timer pool corrupts its state once a timer expires and then deadlocks
// (Z3Prover/z3#5371); the benchmark corpus hit that hang.
//
// An interrupt is not clean either: one that lands while no check is running leaves the context
// cancelled, and the next check on it can return a wrong sat. So once the watchdog has fired
// for a query, that query's answer is discarded as a timeout and its context is thrown away.
// Until then no interrupt has been sent, and answers are trusted. One thread serves every
// context in the process.
class Watchdog {
public:
  static Watchdog& instance() {
    static Watchdog watchdog;
    return watchdog;
  }

  uint64_t arm(z3::context& context, Clock::time_point deadline) {
    std::lock_guard<std::mutex> lock(mutex_);
    // The thread only needs waking when its next deadline moves earlier.
    bool earliest = std::all_of(armed_.begin(), armed_.end(),
                                [&](const auto& entry) { return deadline < entry.second.when; });
    uint64_t ticket = next_ticket_++;
    armed_.emplace(ticket, Deadline{&context, deadline, false});
    if (earliest) wake_.notify_one();
    return ticket;
  }

  // Whether the context was interrupted. Once this returns, the watchdog will not touch the
  // ticket's context again.
  bool disarm(uint64_t ticket) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = armed_.find(ticket);
    internal_assert(it != armed_.end()) << "z3_prove: deadline disarmed twice";
    bool fired = it->second.fired;
    armed_.erase(it);
    return fired;
  }

private:
  struct Deadline {
    z3::context* context;
    Clock::time_point when;
    bool fired;
  };

  // An interrupt that arrives just before Z3 starts checking is lost, so it is repeated until
  // the query gives up.
  static constexpr std::chrono::milliseconds kRepeat{10};

  Watchdog() : thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      if (armed_.empty()) {
        wake_.wait(lock);
        continue;
      }
      // At most one entry per thread inside Z3, so a scan is cheap.
      auto first = armed_.begin();
      for (auto it = armed_.begin(); it != armed_.end(); ++it) {
        if (it->second.when < first->second.when) first = it;
      }
      Clock::time_point now = Clock::now();
      if (now < first->second.when) {
        // A copy: disarm() may erase the entry while this thread waits.
        Clock::time_point when = first->second.when;
        wake_.wait_until(lock, when);
        continue;
      }
      // Under the lock, so that disarm() is final.
      first->second.context->interrupt();
      first->second.fired = true;
      first->second.when = now + kRepeat;
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<uint64_t, Deadline> armed_;
  uint64_t next_ticket_ = 0;
  bool stopping_ = false;
  std::thread thread_; // last: it starts running in the constructor
};

// Arms the watchdog for one check; disarms it on every path out.
class ScopedDeadline {
public:
  ScopedDeadline(z3::context& context, Clock::time_point deadline)
      : ticket_(Watchdog::instance().arm(context, deadline)) {}
  ~ScopedDeadline() {
    if (armed_) Watchdog::instance().disarm(ticket_);
  }
  ScopedDeadline(const ScopedDeadline&) = delete;
  ScopedDeadline& operator=(const ScopedDeadline&) = delete;

  // Whether the context was interrupted.
  bool disarm() {
    armed_ = false;
    return Watchdog::instance().disarm(ticket_);
  }

private:
  uint64_t ticket_;
  bool armed_ = true;
};

// Translates Exprs into Z3 terms over unbounded integers with Expr.h's semantics. Nodes are
// hash-consed and shared, so a translation is memoized per node: without that a DAG such as
// `e = e + e` repeated would blow up exponentially.
class Encoder {
public:
  explicit Encoder(z3::context& context) : context_(context) {}

  z3::expr encode(const Expr& e);

  // Every symbol met so far, by name.
  const std::map<std::string, z3::expr, std::less<>>& symbols() const { return symbols_; }

private:
  z3::expr encode_node(const Expr& e);
  z3::expr symbol(const std::string& name);

  z3::expr zero() { return context_.int_val(0); }

  z3::expr floordiv(const z3::expr& a, const z3::expr& b, const Expr& divisor);
  z3::expr floormod(const z3::expr& a, const z3::expr& b, const Expr& divisor);
  z3::expr nonzero_floordiv(const z3::expr& a, const z3::expr& b);

  z3::context& context_;
  std::unordered_map<const ExprNode*, z3::expr> memo_;
  std::map<std::string, z3::expr, std::less<>> symbols_;
};

z3::expr Encoder::encode(const Expr& e) {
  internal_assert(e.defined()) << "z3_prove: undefined expression";
  auto it = memo_.find(e.get());
  if (it != memo_.end()) return it->second;
  z3::expr result = encode_node(e);
  memo_.emplace(e.get(), result);
  return result;
}

z3::expr Encoder::symbol(const std::string& name) {
  auto it = symbols_.find(name);
  if (it != symbols_.end()) return it->second;
  z3::expr z = context_.int_const(name.c_str());
  symbols_.emplace(name, z);
  return z;
}

// SMT-LIB `div` is Euclidean (the remainder is never negative). For a positive divisor that is
// floor division already; for a negative one, a / b == (-a) / (-b) moves the sign into the
// numerator, where Euclidean and floor division agree again.
z3::expr Encoder::nonzero_floordiv(const z3::expr& a, const z3::expr& b) {
  return z3::ite(b > zero(), a / b, (-a) / (-b));
}

z3::expr Encoder::floordiv(const z3::expr& a, const z3::expr& b, const Expr& divisor) {
  // Constant divisors are the common case; resolving the sign here keeps the term linear and
  // free of case splits.
  if (const Const* c = divisor.as<Const>()) {
    if (c->value == 0) return zero();
    if (c->value > 0) return a / b;
    return (-a) / (-b);
  }
  return z3::ite(b == zero(), zero(), nonzero_floordiv(a, b));
}

z3::expr Encoder::floormod(const z3::expr& a, const z3::expr& b, const Expr& divisor) {
  if (const Const* c = divisor.as<Const>()) {
    if (c->value == 0) return a;
    // For a positive divisor, SMT-LIB `mod` is exactly the floor modulo.
    if (c->value > 0) return z3::mod(a, b);
    return a - b * ((-a) / (-b));
  }
  return z3::ite(b == zero(), a, a - b * nonzero_floordiv(a, b));
}

z3::expr Encoder::encode_node(const Expr& e) {
  // Expr's constructors check operand sorts (integers for arithmetic and comparisons,
  // predicates for the logic), so the Z3 terms are well-sorted by construction.
  auto operands = [&](const BinaryNode* node) {
    return std::pair<z3::expr, z3::expr>(encode(node->a), encode(node->b));
  };
  switch (e.kind()) {
  case ExprKind::Const:
    return context_.int_val(e.as<Const>()->value);
  case ExprKind::BoolConst:
    return context_.bool_val(e.as<BoolConst>()->value);
  case ExprKind::Sym:
    return symbol(e.as<Sym>()->name);
  case ExprKind::Add: {
    auto [a, b] = operands(e.as<Add>());
    return a + b;
  }
  case ExprKind::Sub: {
    auto [a, b] = operands(e.as<Sub>());
    return a - b;
  }
  case ExprKind::Mul: {
    auto [a, b] = operands(e.as<Mul>());
    return a * b;
  }
  case ExprKind::FloorDiv: {
    const FloorDiv* node = e.as<FloorDiv>();
    auto [a, b] = operands(node);
    return floordiv(a, b, node->b);
  }
  case ExprKind::FloorMod: {
    const FloorMod* node = e.as<FloorMod>();
    auto [a, b] = operands(node);
    return floormod(a, b, node->b);
  }
  case ExprKind::Min: {
    auto [a, b] = operands(e.as<Min>());
    return z3::ite(a <= b, a, b);
  }
  case ExprKind::Max: {
    auto [a, b] = operands(e.as<Max>());
    return z3::ite(a >= b, a, b);
  }
  case ExprKind::EQ: {
    auto [a, b] = operands(e.as<EQ>());
    return a == b;
  }
  case ExprKind::NE: {
    auto [a, b] = operands(e.as<NE>());
    return a != b;
  }
  case ExprKind::LT: {
    auto [a, b] = operands(e.as<LT>());
    return a < b;
  }
  case ExprKind::LE: {
    auto [a, b] = operands(e.as<LE>());
    return a <= b;
  }
  case ExprKind::And: {
    auto [a, b] = operands(e.as<And>());
    return a && b;
  }
  case ExprKind::Or: {
    auto [a, b] = operands(e.as<Or>());
    return a || b;
  }
  case ExprKind::Not:
    return !encode(e.as<Not>()->a);
  }
  internal_error << "z3_prove: unhandled expression kind " << kind_name(e.kind());
}

Z3Outcome unknown(std::string reason, Z3Outcome::Limit limit = Z3Outcome::Limit::None) {
  Z3Outcome outcome;
  outcome.reason = std::move(reason);
  outcome.limit = limit;
  return outcome;
}

// The solver's "rlimit count" statistic: the resources the thread's context has counted so far
// (a running count: a query's use is the difference over its check).
uint64_t resources_used(const z3::solver& solver) {
  z3::stats stats = solver.statistics();
  for (unsigned i = 0; i < stats.size(); ++i)
    if (stats.key(i) == "rlimit count")
      return stats.is_uint(i) ? stats.uint_value(i) : static_cast<uint64_t>(stats.double_value(i));
  return 0;
}

Z3Outcome decide(z3::context& context, const std::vector<Expr>& assumptions, const Expr& goal,
                 Z3Budget budget) {
  Encoder encoder(context);

  // A fresh solver per query, so no state leaks from one question into the next. The plain SMT
  // solver, not Z3's default one: the default picks a tactic per query, and that costs about
  // 10 ms before any solving starts, 50 times what a typical shape query needs.
  z3::solver solver(context, z3::solver::simple());
  z3::params params(context);
  params.set("random_seed", kRandomSeed);
  // Z3 4.8's parameter is 32 bits wide.
  params.set("rlimit", static_cast<unsigned>(std::min<uint64_t>(budget.resources, UINT32_MAX)));
  solver.set(params);

  for (const Expr& assumption : assumptions)
    solver.add(encoder.encode(assumption));
  solver.add(!encoder.encode(goal));
  for (const auto& [name, z] : encoder.symbols())
    solver.add(z >= 0);

  const unsigned timeout_ms = budget.timeout_ms ? budget.timeout_ms : UINT32_MAX / 2;
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  ScopedDeadline limit(context, deadline);
  const uint64_t before = resources_used(solver); // the context's count so far
  z3::check_result result = solver.check();
  if (limit.disarm()) return unknown("timeout", Z3Outcome::Limit::Time);
  const uint64_t after = resources_used(solver);
  const uint64_t used = after - std::min(before, after);
  if (result == z3::unsat) {
    Z3Outcome outcome;
    outcome.verdict = Verdict::Proved;
    outcome.resources_used = used;
    return outcome;
  }
  if (result == z3::unknown) {
    // Z3 4.8 says "canceled" when the resource count runs out (the watchdog did not fire:
    // that is handled above); later versions say "max. resource limit exceeded".
    const std::string why = solver.reason_unknown();
    if (budget.resources &&
        (why == "canceled" || why.find("resource") != std::string::npos))
      return unknown("resource limit", Z3Outcome::Limit::Resources);
    // The watchdog may not have been scheduled in time to fire.
    if (Clock::now() >= deadline) return unknown("timeout", Z3Outcome::Limit::Time);
    return unknown("incomplete: " + why);
  }

  // Model completion gives every symbol a value, including those the solver's preprocessing
  // eliminated, so the counterexample names all symbols of the question.
  z3::model model = solver.get_model();
  Bindings counterexample;
  for (const auto& [name, z] : encoder.symbols()) {
    z3::expr value = model.eval(z, /*model_completion=*/true);
    int64_t v = 0;
    if (!value.is_numeral_i64(v)) return unknown("model out of int64 range");
    counterexample.emplace(name, v);
  }

  // The encoding is meant to be exact, but a wrong counterexample would be reported to the user
  // as a fact about their program, so it is checked against the reference semantics. This also
  // catches models that are valid over unbounded integers but overflow int64 on the way.
  for (const Expr& assumption : assumptions) {
    if (eval(assumption, counterexample) != std::optional<int64_t>(1))
      return unknown("model failed verification");
  }
  if (eval(goal, counterexample) != std::optional<int64_t>(0))
    return unknown("model failed verification");

  Z3Outcome outcome;
  outcome.verdict = Verdict::Disproved;
  outcome.counterexample = std::move(counterexample);
  outcome.resources_used = used;
  return outcome;
}

} // namespace

Z3Outcome z3_prove(const std::vector<Expr>& assumptions, const Expr& goal, Z3Budget budget) {
  internal_assert(goal.defined() && goal.is_bool()) << "z3_prove: the goal must be a predicate";
  for (const Expr& assumption : assumptions) {
    internal_assert(assumption.defined() && assumption.is_bool())
        << "z3_prove: every assumption must be a predicate";
  }
  // Z3's C++ API reports errors by exception; this is the one place they can arise, and they
  // never cross into the rest of dsc. The context goes with the query, interrupted or not.
  Z3Outcome outcome;
  try {
    z3::context context;
    outcome = decide(context, assumptions, goal, budget);
  } catch (const z3::exception& e) {
    outcome = unknown(std::string("z3 error: ") + e.msg());
  }
  return outcome;
}

} // namespace dsc::symbolic
