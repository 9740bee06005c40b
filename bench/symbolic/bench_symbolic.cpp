// Measures the prover on a corpus of compiler shape queries (see README.md).
//
//   bench_symbolic [--corpus FILE] [--rlimit N] [--timeout-ms N] [--limit N] [--check] [--cached]
//                  [--show-z3]
//                  [--repeat N]
//
// Each corpus line is `ASSUMPTIONS ;; GOAL` (ASSUMPTIONS `&&`-joined or empty; `#` starts a
// comment line). The measured pass runs every query through a Prover with its cache off, so
// each query does its full work; parsing and building Facts happen before it and are timed
// separately. --check then audits the answers: every counterexample is evaluated against the
// assumptions and the goal, and every answer that did not come from Z3 is compared with Z3's.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "symbolic/Eval.h"
#include "symbolic/Expr.h"
#include "symbolic/Facts.h"
#include "symbolic/Parser.h"
#include "symbolic/Prover.h"
#include "symbolic/Verdict.h"
#include "symbolic/Z3Backend.h"

#ifndef DSC_BENCH_SYMBOLIC_CORPUS
#define DSC_BENCH_SYMBOLIC_CORPUS "corpus.txt"
#endif

namespace dsc::symbolic {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string corpus = DSC_BENCH_SYMBOLIC_CORPUS;
  uint64_t resources = ProverOptions().z3_resources;
  unsigned timeout_ms = ProverOptions().z3_timeout_ms;
  Z3Budget budget() const { return Z3Budget{resources, timeout_ms}; }
  size_t limit = 0; // 0: the whole corpus
  bool check = false;
  bool cached = false;
  bool show_z3 = false;
  // Measured passes; each query keeps its fastest time, which filters out the noise of a
  // shared machine (answers are identical across passes: the cache is off).
  int repeat = 3;
};

struct Query {
  int line = 0;
  std::string text;
  std::vector<Expr> assumptions; // the conjuncts as parsed, for checking counterexamples
  Expr goal;
  Facts facts;
};

struct Outcome {
  ProofResult result;
  double seconds = 0;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string_view trim(std::string_view s) {
  size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

void split_conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (const And* a = e.as<And>()) {
    split_conjuncts(a->a, out);
    split_conjuncts(a->b, out);
    return;
  }
  out.push_back(e);
}

// Reads the corpus; false (after printing why) when a line does not parse.
bool load_corpus(const Options& options, std::vector<Query>& queries) {
  std::ifstream in(options.corpus);
  if (!in) {
    std::cerr << "bench_symbolic: cannot read " << options.corpus << "\n";
    return false;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') continue;
    if (options.limit && queries.size() >= options.limit) break;

    size_t separator = text.find(";;");
    if (separator == std::string_view::npos) {
      std::cerr << options.corpus << ":" << number << ": expected `ASSUMPTIONS ;; GOAL`\n";
      return false;
    }
    Query query;
    query.line = number;
    query.text = std::string(text);
    std::string_view assumptions = trim(text.substr(0, separator));
    std::string_view goal = trim(text.substr(separator + 2));
    if (!assumptions.empty()) {
      ParseResult parsed = parse_predicate(assumptions);
      if (!parsed.ok()) {
        std::cerr << options.corpus << ":" << number << ": in the assumptions:\n"
                  << format_parse_error(assumptions, parsed.error) << "\n";
        return false;
      }
      split_conjuncts(parsed.expr, query.assumptions);
    }
    ParseResult parsed = parse_predicate(goal);
    if (!parsed.ok()) {
      std::cerr << options.corpus << ":" << number << ": in the goal:\n"
                << format_parse_error(goal, parsed.error) << "\n";
      return false;
    }
    query.goal = parsed.expr;
    queries.push_back(std::move(query));
  }
  return true;
}

// Why a counterexample does not refute the query, or nothing when it does.
std::optional<std::string> counterexample_problem(const Query& query, const Bindings& cex) {
  std::set<std::string> symbols = free_symbols(query.goal);
  for (const Expr& a : query.assumptions) {
    std::set<std::string> more = free_symbols(a);
    symbols.insert(more.begin(), more.end());
  }
  for (const std::string& name : symbols) {
    auto it = cex.find(name);
    if (it == cex.end()) return "no value for " + name;
    if (it->second < 0) return name + " is negative";
  }
  for (const Expr& a : query.assumptions) {
    if (eval(a, cex) != std::optional<int64_t>(1)) return "an assumption does not hold";
  }
  if (eval(query.goal, cex) != std::optional<int64_t>(0)) return "the goal does not fail";
  return std::nullopt;
}

std::string format_bindings(const Bindings& b) {
  std::string out;
  for (const auto& [name, value] : b) {
    if (!out.empty()) out += ", ";
    out += name + "=" + std::to_string(value);
  }
  return out;
}

std::string ms(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f ms", seconds * 1e3);
  return buffer;
}

std::string us(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f us", seconds * 1e6);
  return buffer;
}

std::string percent(size_t part, size_t whole) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f%%", whole ? 100.0 * double(part) / double(whole) : 0);
  return buffer;
}

std::string rate(size_t count, double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f queries/s", seconds > 0 ? double(count) / seconds : 0);
  return buffer;
}

bool hit_limit(const ProofResult& r) {
  return r.stage == ProofStage::Z3 && r.verdict == Verdict::Unknown &&
         (r.reason == "timeout" || r.reason == "resource limit");
}

std::vector<Outcome> run_pass(Prover& prover, const std::vector<Query>& queries) {
  std::vector<Outcome> outcomes;
  outcomes.reserve(queries.size());
  for (const Query& query : queries) {
    Clock::time_point start = Clock::now();
    ProofResult result = prover.prove(query.goal, query.facts);
    outcomes.push_back({std::move(result), seconds_since(start)});
  }
  return outcomes;
}

void report(const Options& options, const std::vector<Query>& queries,
            const std::vector<Outcome>& outcomes) {
  constexpr int kStages = kProofStageCount;
  size_t by_stage[kStages][3] = {};
  double stage_seconds[kStages] = {};
  size_t verdicts[3] = {};
  size_t timeouts = 0;
  double total = 0;
  std::vector<double> times;
  size_t slowest = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    int stage = static_cast<int>(o.result.stage);
    int verdict = static_cast<int>(o.result.verdict);
    ++by_stage[stage][verdict];
    stage_seconds[stage] += o.seconds;
    ++verdicts[verdict];
    if (hit_limit(o.result)) ++timeouts;
    total += o.seconds;
    times.push_back(o.seconds);
    if (o.seconds > outcomes[slowest].seconds) slowest = i;
  }
  auto stage_count = [&](ProofStage s) {
    const size_t* v = by_stage[static_cast<int>(s)];
    return v[0] + v[1] + v[2];
  };
  constexpr ProofStage kFastStages[] = {ProofStage::Simplify, ProofStage::TestPoints,
                                        ProofStage::CaseSplit};
  size_t fast = 0;
  double fast_seconds = 0;
  for (ProofStage s : kFastStages) {
    fast += stage_count(s);
    fast_seconds += stage_seconds[static_cast<int>(s)];
  }
  // Decided without Z3: answered Proved or Disproved by a stage before it.
  size_t decided_fast = 0;
  for (ProofStage s : kFastStages) {
    decided_fast += by_stage[static_cast<int>(s)][static_cast<int>(Verdict::Proved)] +
                    by_stage[static_cast<int>(s)][static_cast<int>(Verdict::Disproved)];
  }
  size_t n = outcomes.size();
  std::sort(times.begin(), times.end());
  auto quantile = [&](double q) {
    return times.empty() ? 0.0 : times[std::min(n - 1, static_cast<size_t>(q * double(n)))];
  };

  std::cout << "measured pass (cache off):\n";
  std::cout << "  queries          " << n << "\n";
  std::cout << "  total            " << ms(total) << ", " << rate(n, total) << "\n";
  std::cout << "  fast path        " << fast << " queries in " << ms(fast_seconds) << ", "
            << rate(fast, fast_seconds) << "  (simplify, test-points, case-split)\n";
  std::cout << "  z3               " << stage_count(ProofStage::Z3) << " queries in "
            << ms(stage_seconds[static_cast<int>(ProofStage::Z3)]) << "\n";
  std::cout << "  decided w/o z3   " << decided_fast << " (" << percent(decided_fast, n) << ")\n";
  std::cout << "  verdicts         proved " << verdicts[0] << ", disproved " << verdicts[1]
            << ", unknown " << verdicts[2] << "\n";
  std::cout << "  by stage         (proved / disproved / unknown)\n";
  for (int s = 0; s < kStages; ++s) {
    size_t count = by_stage[s][0] + by_stage[s][1] + by_stage[s][2];
    if (!count && static_cast<ProofStage>(s) == ProofStage::Cache) continue;
    std::printf("    %-13s  %6zu (%6s)  %6zu / %6zu / %6zu\n",
                stage_name(static_cast<ProofStage>(s)), count, percent(count, n).c_str(),
                by_stage[s][0], by_stage[s][1], by_stage[s][2]);
  }
  std::cout << "  z3 limits        " << timeouts << " queries stopped at " << options.resources
            << " resources or " << options.timeout_ms << " ms\n";
  std::cout << "  latency          p50 " << us(quantile(0.5)) << ", p90 " << us(quantile(0.9))
            << ", p99 " << us(quantile(0.99)) << ", max " << us(times.empty() ? 0 : times.back())
            << "\n";
  if (n) {
    const Outcome& o = outcomes[slowest];
    std::cout << "  slowest          " << ms(o.seconds) << " [" << stage_name(o.result.stage)
              << ", " << verdict_name(o.result.verdict) << "] line " << queries[slowest].line
              << ": " << queries[slowest].text << "\n";
  }

  double fast_rate = fast_seconds > 0 ? double(fast) / fast_seconds : 0;
  double share = n ? double(decided_fast) / double(n) : 0;
  auto verdict_of = [](bool ok) { return ok ? "ok" : "MISSED"; };
  std::cout << "targets:\n";
  std::printf("  decided without z3 >= 95%%        %8s  %s\n", percent(decided_fast, n).c_str(),
              verdict_of(share >= 0.95));
  std::printf("  fast path >= 50000 queries/s      %8.0f  %s\n", fast_rate,
              verdict_of(fast_rate >= 50000));
  std::printf("  none past the z3 limits           %8zu  %s\n", timeouts,
              verdict_of(timeouts == 0));

  if (!options.show_z3) return;
  // Each query again without a resource limit, for the resources it needs: what calibrates
  // ProverOptions::z3_resources against time.
  std::cout << "queries decided by z3 (time, resources needed, verdict):\n";
  uint64_t most = 0;
  double resources_per_ms = 0;
  for (size_t i = 0; i < n; ++i) {
    const ProofResult& r = outcomes[i].result;
    if (r.stage != ProofStage::Z3) continue;
    Z3Outcome unlimited = z3_prove(queries[i].facts.predicates(), queries[i].goal,
                                   Z3Budget{0, options.timeout_ms});
    most = std::max(most, unlimited.resources_used);
    if (outcomes[i].seconds > 0)
      resources_per_ms = std::max(resources_per_ms, double(unlimited.resources_used) /
                                                        (outcomes[i].seconds * 1e3));
    std::cout << "  " << ms(outcomes[i].seconds) << " " << unlimited.resources_used << " "
              << verdict_name(r.verdict) << (r.reason.empty() ? "" : " (" + r.reason + ")")
              << " line " << queries[i].line << ": " << queries[i].text << "\n";
  }
  std::cout << "  most resources one query needed: " << most << "; at most " << resources_per_ms
            << " resources per ms\n";
}

// Audits the measured answers; returns the number of problems found.
size_t check(const Options& options, const std::vector<Query>& queries,
             const std::vector<Outcome>& outcomes) {
  constexpr size_t kShown = 20;
  size_t problems = 0, cross_checked = 0, z3_undecided = 0, counterexamples = 0;
  auto complain = [&](const Query& q, const std::string& what) {
    if (++problems <= kShown)
      std::cout << "  MISMATCH line " << q.line << ": " << q.text << "\n    " << what << "\n";
  };
  for (size_t i = 0; i < queries.size(); ++i) {
    const Query& q = queries[i];
    const ProofResult& r = outcomes[i].result;
    if (r.verdict == Verdict::Disproved) {
      ++counterexamples;
      if (std::optional<std::string> why = counterexample_problem(q, r.counterexample)) {
        complain(q, std::string(stage_name(r.stage)) + " counterexample {" +
                        format_bindings(r.counterexample) + "} is wrong: " + *why);
        continue;
      }
    }
    // Z3's own answers have nothing independent to be compared with here.
    if (r.stage == ProofStage::Z3 || r.verdict == Verdict::Unknown) continue;
    Z3Outcome z3 = z3_prove(q.facts.predicates(), q.goal, options.budget());
    if (z3.verdict == Verdict::Unknown) {
      ++z3_undecided;
      continue;
    }
    ++cross_checked;
    if (z3.verdict == r.verdict) continue;
    std::string what = std::string(stage_name(r.stage)) + " says " + verdict_name(r.verdict) +
                       ", z3 says " + verdict_name(z3.verdict);
    if (z3.verdict == Verdict::Disproved)
      what += " at {" + format_bindings(z3.counterexample) + "}";
    complain(q, what);
  }
  std::cout << "check: " << counterexamples << " counterexamples evaluated, " << cross_checked
            << " fast-path answers compared with z3 (" << z3_undecided
            << " more that z3 left undecided); " << problems << " problem"
            << (problems == 1 ? "" : "s") << "\n";
  if (problems > kShown) std::cout << "  (" << problems - kShown << " more not shown)\n";
  return problems;
}

void cached_passes(const Options& options, const std::vector<Query>& queries) {
  ProverOptions prover_options;
  prover_options.z3_timeout_ms = options.timeout_ms;
  prover_options.z3_resources = options.resources;
  prover_options.use_cache = true;
  Prover prover(prover_options);
  for (int pass = 1; pass <= 2; ++pass) {
    uint64_t hits_before = prover.stats().cache_hits;
    Clock::time_point start = Clock::now();
    for (const Query& query : queries)
      prover.prove(query.goal, query.facts);
    double seconds = seconds_since(start);
    std::cout << "cached pass " << pass << ":  " << ms(seconds) << ", "
              << rate(queries.size(), seconds) << ", " << prover.stats().cache_hits - hits_before
              << " cache hits\n";
  }
}

int usage() {
  std::cerr << "usage: bench_symbolic [--corpus FILE] [--rlimit N] [--timeout-ms N] [--limit N] [--check]\n"
               "                      [--cached] [--show-z3] [--repeat N]\n";
  return 2;
}

bool parse_number(const char* text, unsigned long& out) {
  char* end = nullptr;
  out = std::strtoul(text, &end, 10);
  return end && *end == '\0' && end != text;
}

int run(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    unsigned long value = 0;
    if (arg == "--check") {
      options.check = true;
    } else if (arg == "--repeat" && i + 1 < argc && parse_number(argv[++i], value) && value >= 1 &&
               value <= 100) {
      options.repeat = static_cast<int>(value);
    } else if (arg == "--cached") {
      options.cached = true;
    } else if (arg == "--show-z3") {
      options.show_z3 = true;
    } else if (arg == "--corpus" && i + 1 < argc) {
      options.corpus = argv[++i];
    } else if (arg == "--rlimit" && i + 1 < argc && parse_number(argv[++i], value)) {
      options.resources = value;
    } else if (arg == "--timeout-ms" && i + 1 < argc && parse_number(argv[++i], value)) {
      options.timeout_ms = static_cast<unsigned>(value);
    } else if (arg == "--limit" && i + 1 < argc && parse_number(argv[++i], value)) {
      options.limit = value;
    } else {
      return usage();
    }
  }

  std::vector<Query> queries;
  if (!load_corpus(options, queries)) return 1;
  Clock::time_point start = Clock::now();
  for (Query& query : queries) {
    for (const Expr& a : query.assumptions)
      query.facts.add(a);
  }
  double facts_seconds = seconds_since(start);

  std::cout << "bench_symbolic: " << options.corpus << "\n";
  std::cout << "  " << queries.size() << " queries, z3 limits " << options.resources
            << " resources and " << options.timeout_ms << " ms, facts built in " << ms(facts_seconds) << " ("
            << us(queries.empty() ? 0 : facts_seconds / double(queries.size()))
            << " per query, not in the times below)\n";

  // Z3 builds its per-thread context on first use; a compiler pays that once per thread, so it
  // is kept out of the first query's time.
  z3_prove({}, BoolConst::make(true), options.budget());

  ProverOptions prover_options;
  prover_options.z3_timeout_ms = options.timeout_ms;
  prover_options.z3_resources = options.resources;
  prover_options.use_cache = false;
  Prover prover(prover_options);
  std::vector<Outcome> outcomes = run_pass(prover, queries);
  for (int pass = 1; pass < options.repeat; ++pass) {
    std::vector<Outcome> again = run_pass(prover, queries);
    for (size_t i = 0; i < outcomes.size(); ++i)
      outcomes[i].seconds = std::min(outcomes[i].seconds, again[i].seconds);
  }
  std::cout << "  best of " << options.repeat << " passes per query\n";
  report(options, queries, outcomes);

  if (options.cached) cached_passes(options, queries);
  if (options.check && check(options, queries, outcomes) != 0) return 1;
  return 0;
}

} // namespace
} // namespace dsc::symbolic

int main(int argc, char** argv) {
  return dsc::symbolic::run(argc, argv);
}
