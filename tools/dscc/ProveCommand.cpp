// dscc prove [--assume FACT]... FACT
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "symbolic/Facts.h"
#include "symbolic/Parser.h"
#include "symbolic/Printer.h"
#include "symbolic/Prover.h"
#include "symbolic/Simplify.h"
#include "tools/dscc/Command.h"

namespace dsc::dscc {

namespace {

constexpr const char* kProveUsage =
    R"(usage: dscc prove [--assume FACT]... [--rlimit=N] [--timeout-ms=N] [--explain] FACT

Decides whether FACT holds for every value of its symbols (all symbols are tensor
dimensions, so each is >= 0) that satisfies the assumptions. Prints one line:
  proved                 FACT holds everywhere the assumptions hold
  disproved: A=1, B=3    a counterexample: it satisfies every assumption, falsifies FACT
  unknown                neither could be established within the time limit

Syntax: integers, symbols, + - * / % (floordiv and floormod, as in Python), min(a, b),
max(a, b), == != < <= > >= (chainable: 1 <= S <= 512), && || !, parentheses.

options:
  --assume FACT      an assumption (repeatable)
  --rlimit=N         Z3's resource limit for the query, a count that does not depend on the
                     machine's speed or load (default 20000; 0: none)
  --timeout-ms=N     Z3's wall-clock backstop for the query (default 10000)
  --explain          also print, on stderr, the canonical form and which stage decided
)";

bool parse_fact(const std::string& text, const char* what, symbolic::Expr* out) {
  symbolic::ParseResult r = symbolic::parse_predicate(text);
  if (r.ok()) {
    *out = r.expr;
    return true;
  }
  std::cerr << symbolic::format_parse_error(text, r.error);
  std::cerr << "note: in " << what << "\n";
  return false;
}

bool parse_uint(const std::string& text, unsigned* out) {
  if (text.empty() || text.size() > 9) return false;
  unsigned v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  *out = v;
  return true;
}

} // namespace

int run_prove(const Args& args) {
  std::vector<std::string> assumptions;
  std::string fact;
  bool have_fact = false;
  bool explain = false;
  symbolic::ProverOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kProveUsage, stdout);
      return 0;
    }
    if (a == "--assume") {
      if (i + 1 >= args.size()) {
        std::cerr << "dscc prove: error: --assume needs a FACT\n";
        return 1;
      }
      assumptions.push_back(args[++i]);
      continue;
    }
    if (a.rfind("--assume=", 0) == 0) {
      assumptions.push_back(a.substr(9));
      continue;
    }
    if (a.rfind("--rlimit=", 0) == 0) {
      unsigned resources = 0;
      if (!parse_uint(a.substr(9), &resources)) {
        std::cerr << "dscc prove: error: --rlimit needs a non-negative integer\n";
        return 1;
      }
      options.z3_resources = resources;
      continue;
    }
    if (a.rfind("--timeout-ms=", 0) == 0) {
      if (!parse_uint(a.substr(13), &options.z3_timeout_ms) || options.z3_timeout_ms == 0) {
        std::cerr << "dscc prove: error: --timeout-ms needs a positive integer\n";
        return 1;
      }
      continue;
    }
    if (a == "--explain") {
      explain = true;
      continue;
    }
    if (a.size() > 1 && a[0] == '-' && a[1] == '-') {
      std::cerr << "dscc prove: error: unknown option '" << a << "'\n\n" << kProveUsage;
      return 1;
    }
    if (have_fact) {
      std::cerr << "dscc prove: error: more than one FACT given ('" << fact << "' and '" << a
                << "'); quote the fact, or use --assume for assumptions\n";
      return 1;
    }
    fact = a;
    have_fact = true;
  }
  if (!have_fact) {
    std::cerr << "dscc prove: error: missing FACT\n\n" << kProveUsage;
    return 1;
  }

  symbolic::Facts facts;
  for (size_t i = 0; i < assumptions.size(); ++i) {
    symbolic::Expr e;
    std::string what = "--assume \"" + assumptions[i] + "\"";
    if (!parse_fact(assumptions[i], what.c_str(), &e)) return 1;
    facts.add(e);
  }
  symbolic::Expr goal;
  if (!parse_fact(fact, "FACT", &goal)) return 1;

  symbolic::Prover prover(options);
  auto start = std::chrono::steady_clock::now();
  symbolic::ProofResult result = prover.prove(goal, facts);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  std::cout << symbolic::format_result(result) << "\n";
  if (explain) {
    std::cerr << "canonical: " << symbolic::simplify(goal, facts) << "\n"
              << "decided by: " << symbolic::stage_name(result.stage) << " in " << ms << " ms\n";
    if (!result.reason.empty()) std::cerr << "reason: " << result.reason << "\n";
  }
  return 0;
}

} // namespace dsc::dscc
