// libFuzzer entry point for the expression parser of `dscc prove` (symbolic/Parser.h) and what
// runs on what it parses, short of Z3. The input is lines of text: the first is the goal, an
// integer or boolean expression, and each later line is an assumption (`--assume`), a predicate.
// Any text must end in a parse error with a column inside the text, or in expressions that
//   - print as text that parses back to the same (hash-consed) expression;
//   - simplify to an expression of the same value wherever both evaluate, with and without the
//     assumptions as facts (symbols range over values >= 0, as in Expr.h);
//   - for a predicate goal, the prover without Z3 decides soundly: never Proved where some test
//     point satisfies the assumptions and falsifies the goal, and a Disproved counterexample
//     satisfies the assumptions and falsifies the goal.
// Anything else, or a crash, a hang, a leak or a sanitizer report, is a finding.
//
// Built by tools/scripts/fuzz.sh (clang, -DDSC_FUZZ=ON, ASan+UBSan), seeded from
// tests/fuzz/corpus/fuzz_prove_expr (tests/fuzz/make_seeds.py writes the seeds).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "symbolic/Eval.h"
#include "symbolic/Facts.h"
#include "symbolic/Parser.h"
#include "symbolic/Printer.h"
#include "symbolic/Prover.h"
#include "symbolic/Simplify.h"

namespace {

using dsc::symbolic::Bindings;
using dsc::symbolic::Expr;

// Parses one line; false (after checking the error is well-formed) when it does not parse.
bool parse_line(std::string_view text, bool predicate, Expr* out) {
  dsc::symbolic::ParseResult r =
      predicate ? dsc::symbolic::parse_predicate(text) : dsc::symbolic::parse_expr(text);
  if (!r.ok()) {
    int column = r.error.column;
    if (r.error.message.empty() || column < 1 || static_cast<size_t>(column) > text.size() + 1)
      __builtin_trap();
    (void)dsc::symbolic::format_parse_error(text, r.error);
    return false;
  }
  // The printed form parses back to the same node.
  std::string printed = dsc::symbolic::to_string(r.expr);
  dsc::symbolic::ParseResult again = dsc::symbolic::parse_expr(printed);
  if (!again.ok() || !again.expr.same_as(r.expr)) __builtin_trap();
  *out = r.expr;
  return true;
}

// Test points over the symbols: small values, distinct values, primes, large values, and values
// drawn from the input so that the fuzzer can steer them.
std::vector<Bindings> test_points(const std::set<std::string>& symbols, const uint8_t* data,
                                  size_t size) {
  static const int64_t kFixed[] = {0, 1, 2, 3, 7, 64, 511, 512, 1000003, int64_t{1} << 31};
  std::vector<Bindings> points;
  for (int64_t v : kFixed) {
    Bindings b;
    for (const std::string& s : symbols) b[s] = v;
    points.push_back(b);
  }
  for (size_t p = 0; p < 6; ++p) {
    Bindings b;
    size_t k = 0;
    for (const std::string& s : symbols) {
      uint64_t h = 1469598103934665603ull ^ (p * 1315423911u + k++);
      for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
      int64_t magnitude = p < 3 ? 17 : p < 5 ? 4099 : (int64_t{1} << 40);
      b[s] = static_cast<int64_t>(h % static_cast<uint64_t>(magnitude));
    }
    points.push_back(b);
  }
  return points;
}

bool holds(const std::vector<Expr>& facts, const Bindings& b) {
  for (const Expr& f : facts) {
    std::optional<int64_t> v = dsc::symbolic::eval(f, b);
    if (!v || *v != 1) return false;
  }
  return true;
}

// Where both evaluate, `a` and `b` agree.
void check_same_value(const Expr& a, const Expr& b, const std::vector<Bindings>& points) {
  for (const Bindings& p : points) {
    std::optional<int64_t> va = dsc::symbolic::eval(a, p);
    std::optional<int64_t> vb = dsc::symbolic::eval(b, p);
    if (va && vb && *va != *vb) __builtin_trap();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> lines;
  for (size_t start = 0;;) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (lines.size() > 8) return 0; // a few assumptions are enough; more only slow each run

  Expr goal;
  if (!parse_line(lines[0], /*predicate=*/false, &goal)) return 0;
  std::vector<Expr> assumptions;
  dsc::symbolic::Facts facts;
  for (size_t i = 1; i < lines.size(); ++i) {
    Expr f;
    if (!parse_line(lines[i], /*predicate=*/true, &f)) return 0;
    assumptions.push_back(f);
    facts.add(f);
  }

  std::set<std::string> symbols = dsc::symbolic::free_symbols(goal);
  for (const Expr& f : assumptions) symbols.merge(dsc::symbolic::free_symbols(f));
  std::vector<Bindings> points = test_points(symbols, data, size);

  check_same_value(goal, dsc::symbolic::simplify(goal), points);
  std::vector<Bindings> assumed;
  for (const Bindings& p : points)
    if (holds(assumptions, p)) assumed.push_back(p);
  check_same_value(goal, dsc::symbolic::simplify(goal, facts), assumed);

  if (!goal.is_bool()) return 0;
  dsc::symbolic::ProverOptions options;
  options.use_z3 = false;
  options.use_cache = false;
  dsc::symbolic::Prover prover(options);
  dsc::symbolic::ProofResult r = prover.prove(goal, facts);
  (void)dsc::symbolic::format_result(r);
  if (r.verdict == dsc::symbolic::Verdict::Proved) {
    for (const Bindings& p : assumed) {
      std::optional<int64_t> v = dsc::symbolic::eval(goal, p);
      if (v && *v != 1) __builtin_trap();
    }
  } else if (r.verdict == dsc::symbolic::Verdict::Disproved) {
    std::optional<int64_t> v = dsc::symbolic::eval(goal, r.counterexample);
    if (!holds(assumptions, r.counterexample) || !v || *v != 0) __builtin_trap();
  }
  return 0;
}
