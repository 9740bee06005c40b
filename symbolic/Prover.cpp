#include "symbolic/Prover.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "symbolic/Bounds.h"
#include "symbolic/Simplify.h"
#include "symbolic/Z3Backend.h"

namespace dsc::symbolic {

const char* verdict_name(Verdict v) {
  switch (v) {
  case Verdict::Proved:
    return "proved";
  case Verdict::Disproved:
    return "disproved";
  case Verdict::Unknown:
    return "unknown";
  }
  return "?";
}

const char* stage_name(ProofStage stage) {
  switch (stage) {
  case ProofStage::Simplify:
    return "simplify";
  case ProofStage::TestPoints:
    return "test-points";
  case ProofStage::CaseSplit:
    return "case-split";
  case ProofStage::Z3:
    return "z3";
  case ProofStage::Cache:
    return "cache";
  }
  return "?";
}

namespace {

void collect_constants(const Expr& e, std::set<int64_t>& out) {
  if (out.size() > 16) return;
  if (const Const* c = e.as<Const>()) {
    out.insert(c->value);
    return;
  }
  if (const Not* n = e.as<Not>()) return collect_constants(n->a, out);
  if (e.is<Sym>() || e.is<BoolConst>()) return;
  const auto* n = static_cast<const BinaryNode*>(e.get());
  collect_constants(n->a, out);
  collect_constants(n->b, out);
}

bool holds(const Expr& e, const SymbolValues& at) {
  std::optional<int64_t> v = eval_with(e, at);
  return v && *v == 1;
}

bool fails(const Expr& e, const SymbolValues& at) {
  std::optional<int64_t> v = eval_with(e, at);
  return v && *v == 0;
}

// Looks for a point where every fact holds and the predicate is false, by evaluation at a
// few dozen candidates per query: range ends, small values, neighbours of the query's
// constants, values of the right residue. Symbols that a fact pins to an expression take
// that expression's value, so equalities are satisfied by construction.
class TestPointSearch {
public:
  TestPointSearch(const Expr& predicate, const Facts& facts)
      : predicate_(predicate), facts_(facts) {}

  bool find(Bindings* counterexample) {
    std::set<std::string> names = free_symbols(predicate_);
    std::set<int64_t> constants;
    collect_constants(predicate_, constants);
    for (const Expr& p : facts_.predicates()) {
      for (const std::string& n : free_symbols(p)) names.insert(n);
      collect_constants(p, constants);
    }
    for (const std::string& n : names) {
      if (const Expr* value = facts_.substitution(n)) {
        derived_.emplace_back(sym(n), *value);
        continue;
      }
      free_.push_back(n);
      free_nodes_.push_back(sym(n));
      candidates_.push_back(candidates_for(n, constants));
    }
    return search(counterexample);
  }

private:
  std::vector<int64_t> candidates_for(const std::string& name, const std::set<int64_t>& constants) {
    Interval r = intersect(bounds_of(sym(name), facts_), Interval::at_least(0));
    ModRem m = facts_.divisibility(sym(name));
    std::vector<int64_t> out;
    auto add = [&](int64_t v) {
      if (r.contains(v)) out.push_back(v);
    };
    int64_t lo = r.lo;
    for (int64_t k = 0; k <= 4; ++k) add(lo + k);
    if (r.has_upper()) {
      add(r.hi);
      add(r.hi - 1);
      add(lo + (r.hi - lo) / 2);
    }
    for (int64_t c : constants) {
      if (c < -(int64_t{1} << 40) || c > (int64_t{1} << 40)) continue;
      add(c - 1);
      add(c);
      add(c + 1);
    }
    add(lo + 7);
    add(lo + 16);
    add(lo + 97);
    if (m.modulus > 1 && m.modulus < (int64_t{1} << 30) && lo < (int64_t{1} << 40)) {
      int64_t first = lo + ((m.remainder - lo) % m.modulus + m.modulus) % m.modulus;
      for (int64_t k = 0; k < 3; ++k) add(first + k * m.modulus);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.empty()) out.push_back(lo);
    return out;
  }

  bool try_point(const std::vector<size_t>& choice, Bindings* counterexample) {
    point_.values.clear();
    for (size_t i = 0; i < free_.size(); ++i)
      point_.values.emplace_back(free_nodes_[i].get(), candidates_[i][choice[i]]);
    for (const auto& [name, value] : derived_) {
      std::optional<int64_t> v = eval_with(value, point_);
      if (!v || *v < 0) return false;
      point_.values.emplace_back(name.get(), *v);
    }
    if (!fails(predicate_, point_)) return false;
    for (const Expr& p : facts_.predicates())
      if (!holds(p, point_)) return false;
    counterexample->clear();
    for (const auto& [node, value] : point_.values)
      (*counterexample)[static_cast<const Sym*>(node)->name] = value;
    return true;
  }

  bool search(Bindings* counterexample) {
    constexpr int kBudget = 96;
    int tried = 0;
    size_t widest = 1;
    for (const auto& c : candidates_) widest = std::max(widest, c.size());
    std::vector<size_t> choice(free_.size(), 0);
    // Every symbol at its i-th candidate.
    for (size_t i = 0; i < widest && tried < kBudget; ++i, ++tried) {
      for (size_t s = 0; s < free_.size(); ++s) choice[s] = std::min(i, candidates_[s].size() - 1);
      if (try_point(choice, counterexample)) return true;
    }
    // One symbol moves, the others sit at their second candidate (often 1, never a 0-dim).
    for (size_t s = 0; s < free_.size() && tried < kBudget; ++s) {
      for (size_t i = 0; i < candidates_[s].size() && tried < kBudget; ++i, ++tried) {
        for (size_t t = 0; t < free_.size(); ++t) choice[t] = std::min<size_t>(1, candidates_[t].size() - 1);
        choice[s] = i;
        if (try_point(choice, counterexample)) return true;
      }
    }
    // Deterministic pseudo-random mixes.
    uint64_t state = predicate_.hash() | 1;
    while (tried++ < kBudget && !free_.empty()) {
      for (size_t s = 0; s < free_.size(); ++s) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        choice[s] = (state >> 33) % candidates_[s].size();
      }
      if (try_point(choice, counterexample)) return true;
    }
    return false;
  }

  const Expr& predicate_;
  const Facts& facts_;
  std::vector<std::string> free_;
  std::vector<Expr> free_nodes_; // the Sym of each free_ name
  std::vector<std::vector<int64_t>> candidates_;
  std::vector<std::pair<Expr, Expr>> derived_; // substituted symbol, its value
  SymbolValues point_;                         // the point being tried, reused

};

// The atoms of a canonical predicate that a case split can eliminate, in order of first
// appearance, without duplicates.
void collect_split_atoms(const Expr& e, std::vector<Expr>& out) {
  if (out.size() >= 3) return;
  switch (e.kind()) {
  case ExprKind::Const:
  case ExprKind::BoolConst:
  case ExprKind::Sym:
    return;
  case ExprKind::Not:
    return collect_split_atoms(e.as<Not>()->a, out);
  default:
    break;
  }
  const auto* n = static_cast<const BinaryNode*>(e.get());
  collect_split_atoms(n->a, out);
  collect_split_atoms(n->b, out);
  bool splittable = e.is<Min>() || e.is<Max>();
  if (const FloorDiv* div = e.as<FloorDiv>()) {
    const Const* c = div->b.as<Const>();
    splittable = c && c->value > 1;
  }
  if (!splittable || out.size() >= 3) return;
  for (const Expr& seen : out)
    if (seen.same_as(e)) return;
  out.push_back(e);
}

// The two cases of an atom: min(a, b) is a or b; x / c is 0 (x < c) or not.
std::pair<Expr, Expr> cases_of(const Expr& atom) {
  if (const Min* m = atom.as<Min>()) return {le(m->a, m->b), lt(m->b, m->a)};
  if (const Max* m = atom.as<Max>()) return {le(m->b, m->a), lt(m->a, m->b)};
  const FloorDiv* d = atom.as<FloorDiv>();
  return {lt(d->a, d->b), le(d->b, d->a)};
}

bool proved_by_cases(const Expr& canonical, const Facts& facts) {
  std::vector<Expr> atoms;
  collect_split_atoms(canonical, atoms);
  if (atoms.empty()) return false;
  for (unsigned mask = 0; mask < (1u << atoms.size()); ++mask) {
    Facts with_case = facts;
    for (size_t i = 0; i < atoms.size(); ++i) {
      auto [first, second] = cases_of(atoms[i]);
      with_case.add((mask >> i) & 1 ? second : first);
    }
    if (with_case.inconsistent()) continue; // this case cannot happen
    Expr decided = simplify(canonical, with_case); // keeps the node alive while b points to it
    const BoolConst* b = decided.as<BoolConst>();
    if (!b || !b->value) return false;
  }
  return true;
}

} // namespace

bool Prover::CacheKey::operator==(const CacheKey& other) const {
  if (!predicate.same_as(other.predicate) || facts.size() != other.facts.size()) return false;
  for (size_t i = 0; i < facts.size(); ++i)
    if (!facts[i].same_as(other.facts[i])) return false;
  return true;
}

size_t Prover::CacheKeyHash::operator()(const CacheKey& key) const {
  size_t h = key.predicate.hash();
  for (const Expr& f : key.facts) h = h * 1000003u ^ f.hash();
  return h;
}

ProofResult Prover::prove(const Expr& predicate, const Facts& facts) {
  internal_assert(predicate.defined() && predicate.is_bool()) << "prove() needs a predicate";
  ++stats_.queries;
  if (options_.use_cache) {
    auto it = cache_.find(CacheKey{predicate, facts.predicates()});
    if (it != cache_.end()) {
      ++stats_.cache_hits;
      ++stats_.by_stage[static_cast<int>(ProofStage::Cache)];
      return it->second;
    }
  }
  ProofResult result = decide(predicate, facts);
  ++stats_.by_stage[static_cast<int>(result.stage)];
  if (result.verdict == Verdict::Unknown) ++stats_.unknown;
  if (options_.use_cache) cache_.emplace(CacheKey{predicate, facts.predicates()}, result);
  return result;
}

ProofResult Prover::decide(const Expr& predicate, const Facts& facts) {
  Expr simplified = simplify(predicate, facts);
  const BoolConst* decided = simplified.as<BoolConst>();
  if (decided && decided->value) return ProofResult{Verdict::Proved, {}, ProofStage::Simplify, ""};

  Bindings counterexample;
  if (TestPointSearch(predicate, facts).find(&counterexample))
    return ProofResult{Verdict::Disproved, std::move(counterexample), ProofStage::TestPoints, ""};

  if (proved_by_cases(simplified, facts))
    return ProofResult{Verdict::Proved, {}, ProofStage::CaseSplit, ""};

  if (!options_.use_z3)
    return ProofResult{Verdict::Unknown, {}, ProofStage::CaseSplit, "z3 disabled"};
  ++stats_.z3_calls;
  Z3Outcome z3 = z3_prove(facts.predicates(), predicate,
                          Z3Budget{options_.z3_resources, options_.z3_timeout_ms});
  stats_.z3_resource_limited += z3.limit == Z3Outcome::Limit::Resources ? 1 : 0;
  stats_.z3_timeouts += z3.limit == Z3Outcome::Limit::Time ? 1 : 0;
  return ProofResult{z3.verdict, std::move(z3.counterexample), ProofStage::Z3, z3.reason};
}

ProofResult prove(const Expr& predicate, const Facts& facts) {
  static Prover prover;
  return prover.prove(predicate, facts);
}

std::string format_result(const ProofResult& result) {
  if (result.verdict == Verdict::Proved) return "proved";
  if (result.verdict == Verdict::Unknown) return "unknown";
  std::ostringstream os;
  os << "disproved:";
  const char* sep = " ";
  for (const auto& [name, value] : result.counterexample) {
    os << sep << name << "=" << value;
    sep = ", ";
  }
  return os.str();
}

} // namespace dsc::symbolic
