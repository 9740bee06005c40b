#pragma once
// Random graphs for property tests of fusion: elementwise, broadcast, reduction, softmax and
// norm, reshape round trip, transpose, concat+slice and matmul ops (some with a bias per column
// and GELU's tanh form after them) over symbolic shapes [N, M]
// (and their broadcasts [N, 1], [1, M], [M], and [M, N]), as a complete .dsc file defining
// `fn f(x0: f32[N, M], x1: f32[N, M], x2: f32[M], x3: f32[N, 1], x4: f32[M, N])`. Values stay
// bounded (tanh, sigmoid, divisions by 1 + |y|) so that comparisons measure the compiler, not
// overflow; every value is read or returned, so nothing is dead.
//
// The choices come from a Choices: a seeded PRNG in RandomGraphFusionTest, the fuzzer's bytes in
// tests/fuzz/fuzz_compile.cpp.

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace dsc::testing {

class Choices {
public:
  virtual ~Choices() = default;
  // A choice in [0, n), n >= 1.
  virtual uint64_t below(uint64_t n) = 0;
};

class SeededChoices : public Choices {
public:
  explicit SeededChoices(uint64_t seed) : rng_(seed) {}
  uint64_t below(uint64_t n) override { return rng_() % n; }

private:
  std::mt19937_64 rng_;
};

namespace random_graph {

// The shapes a value can have; every one broadcasts against NM.
enum class Shape { NM, N1, OneM, M, MN };

inline const char* type_of(Shape s) {
  switch (s) {
  case Shape::NM: return "f32[N, M]";
  case Shape::N1: return "f32[N, 1]";
  case Shape::OneM: return "f32[1, M]";
  case Shape::M: return "f32[M]";
  case Shape::MN: return "f32[M, N]";
  }
  return "";
}

struct Value {
  std::string name;
  Shape shape;
  bool used = false;
};

// The shape of `a op b` under broadcasting (MN only meets MN).
inline Shape broadcast(Shape a, Shape b) {
  if (a == b) return a;
  if ((a == Shape::OneM && b == Shape::M) || (a == Shape::M && b == Shape::OneM)) return Shape::OneM;
  return Shape::NM;
}

class GraphGenerator {
public:
  GraphGenerator(Choices& choices, bool where) : choices_(choices), where_(where) {}

  std::string program() {
    // The where clause comes first, so that the ops' shape facts are decided under it.
    std::string where = where_ ? where_clause() : "";
    const Shape param_shapes[] = {Shape::NM, Shape::NM, Shape::M, Shape::N1, Shape::MN};
    std::ostringstream params;
    for (size_t i = 0; i < std::size(param_shapes); ++i) {
      std::string name = "x" + std::to_string(i);
      params << (i ? ", " : "") << name << ": " << type_of(param_shapes[i]);
      values_.push_back({name, param_shapes[i]});
    }
    const int ops = 4 + static_cast<int>(choose(9));
    for (int i = 0; i < ops; ++i) add_op();
    // Every value nothing reads is a result, so nothing is dead; and, sometimes, a value that is
    // also read inside the graph (so it is needed both inside a fused group and outside it).
    std::string results;
    for (size_t i = std::size(param_shapes); i < values_.size(); ++i)
      if (!values_[i].used || (choose(8) == 0 && i + 1 < values_.size()))
        results += (results.empty() ? "" : ", ") + values_[i].name;
    std::ostringstream out;
    out << "import nn\nfn f(" << params.str() << ")" << where << " {\n" << body_.str()
        << "  return (" << results << ")\n}\n";
    return out.str();
  }

private:
  // None, or clauses that bound the symbols, relate them (N == M changes what the prover can
  // show about broadcasts and reshapes) or hold always.
  std::string where_clause() {
    switch (choose(6)) {
    case 0: return "";
    case 1: return "\n  where N >= 1, M >= 1";
    case 2: return "\n  where N <= " + std::to_string(1 + choose(24));
    case 3: return "\n  where M <= " + std::to_string(1 + choose(24)) + ", N >= 2";
    case 4: return "\n  where N == M";
    default: return "\n  where M % 2 == 0";
    }
  }

  // A value to read, more often a recent one (so that graphs are deep rather than wide).
  const Value& pick() { return use(values_.size() - 1 - recent(values_.size())); }
  const Value& pick(Shape s) {
    std::vector<size_t> of;
    for (size_t i = 0; i < values_.size(); ++i)
      if (values_[i].shape == s) of.push_back(i);
    return use(of.empty() ? 0 : of[of.size() - 1 - recent(of.size())]);
  }
  // 0 half the time, 1 a quarter, ..., below n.
  size_t recent(size_t n) {
    size_t back = 0;
    while (back + 1 < n && choose(2)) ++back;
    return back;
  }
  const Value& use(size_t i) {
    values_[i].used = true;
    return values_[i];
  }
  // Any value with N rows and M columns after broadcasting ([M, N] values are transposed).
  std::string nm_operand() {
    const Value& v = pick();
    if (v.shape == Shape::MN) return "permute(" + v.name + ", [1, 0])";
    return v.name;
  }
  Shape nm_shape(const std::string& operand) const {
    for (const Value& v : values_)
      if (v.name == operand) return v.shape;
    return Shape::NM; // a permuted [M, N]
  }

  void bind(const std::string& expr, Shape shape) {
    std::string name = "v" + std::to_string(values_.size());
    body_ << "  let " << name << " = " << expr << "\n";
    values_.push_back({name, shape});
  }

  void add_op() {
    switch (choose(14)) {
    case 0:
    case 1: { // a bounded unary op
      const char* ops[] = {"tanh", "sigmoid", "nn.relu", "nn.silu", "abs", "neg", "nn.gelu"};
      const Value& v = pick();
      bind(std::string(ops[choose(std::size(ops))]) + "(" + v.name + ")", v.shape);
      return;
    }
    case 2:
    case 3:
    case 4: { // a binary op under broadcasting
      std::string a = nm_operand(), b = nm_operand();
      Shape s = broadcast(nm_shape(a), nm_shape(b));
      switch (choose(5)) {
      case 0: bind(a + " + " + b, s); return;
      case 1: bind(a + " - " + b, s); return;
      case 2: bind(a + " * " + b, s); return;
      case 3: bind("maximum(" + a + ", " + b + ")", s); return;
      default: bind(a + " / (abs(" + b + ") + 1.0)", s); return;
      }
    }
    case 5: { // exp of something bounded
      const Value& v = pick();
      bind("exp(tanh(" + v.name + "))", v.shape);
      return;
    }
    case 6: { // a reduction over one axis, kept as a broadcastable dim
      const Value& v = pick(Shape::NM);
      const char* ops[] = {"sum", "max", "mean", "min"};
      bool rows = choose(2);
      bind(std::string(ops[choose(std::size(ops))]) + "(" + v.name + ", axis=" + (rows ? "-1" : "0") +
               ", keepdims=true)",
           rows ? Shape::N1 : Shape::OneM);
      return;
    }
    case 7: { // softmax and the norms: stitched reductions
      const Value& v = pick(Shape::NM);
      const char* ops[] = {"nn.softmax(", "nn.log_softmax(", "nn.rms_norm(", "nn.layer_norm("};
      int which = static_cast<int>(choose(std::size(ops)));
      std::string g = pick(Shape::M).name;
      std::string args = v.name;
      if (which == 2) args += ", " + g;
      if (which == 3) args += ", " + g + ", " + pick(Shape::M).name;
      bind(std::string(ops[which]) + args + ")", Shape::NM);
      return;
    }
    case 8: { // a reshape round trip: [N, M] -> [N * M] -> [N, M] (an index remap, no copy)
      const Value& v = pick(Shape::NM);
      bind("reshape(reshape(" + v.name + " * 2.0, [N * M]), [N, M])", Shape::NM);
      return;
    }
    case 9: { // a transpose
      const Value& v = pick(choose(2) ? Shape::NM : Shape::MN);
      bind("permute(" + v.name + ", [1, 0])", v.shape == Shape::NM ? Shape::MN : Shape::NM);
      return;
    }
    case 10: { // concat along rows and the halves split back
      const Value& v = pick(Shape::NM);
      const Value& w = pick(Shape::NM);
      bind("slice(concat([" + v.name + ", " + w.name + " + 1.0], axis=0), axis=0, start=N, end=2 * N)",
           Shape::NM);
      return;
    }
    case 12: { // a loop: a fixed carry N times, or a carry rebuilt one column per iteration
      const Value& v = pick(Shape::NM);
      const Value& w = pick(Shape::NM);
      if (choose(2)) {
        bind("for i in 0..N carry (c = " + v.name + ") { tanh(c) * 0.5 + " + w.name + " }",
             Shape::NM);
      } else {
        bind("for i in 0..M carry (acc: f32[N, i] = zeros([N, 0])) { concat([acc, slice(" +
                 v.name + ", axis=1, start=i, end=i + 1) * 2.0], axis=1) }",
             Shape::NM);
      }
      return;
    }
    case 13: { // an if on a value's sign, both branches the same shape
      const Value& v = pick(Shape::NM);
      const Value& w = pick(Shape::NM);
      bind("if sum(" + v.name + ") > 0.0 { " + v.name + " * 2.0 } else { tanh(" + w.name + ") }",
           Shape::NM);
      return;
    }
    default: { // two library-call matmuls: [N, M] @ [M, N] @ [N, M], then a scale, or a bias
               // per column and maybe GELU's tanh form (cuBLASLt's epilogues on CUDA)
      const Value& v = pick(Shape::NM);
      const Value& w = pick(Shape::MN);
      const Value& u = pick(Shape::NM);
      const std::string first = "matmul(tanh(" + v.name + "), tanh(" + w.name + "))";
      switch (choose(3)) {
      case 0:
        bind("matmul(" + first + ", tanh(" + u.name + ")) * 0.01", Shape::NM);
        return;
      case 1:
        bind("matmul(" + first + " * 0.01, tanh(" + u.name + ")) + " + pick(Shape::M).name,
             Shape::NM);
        return;
      default:
        bind("nn.gelu_tanh(matmul(" + first + " * 0.01, tanh(" + u.name + ")) + " +
                 pick(Shape::M).name + ")",
             Shape::NM);
        return;
      }
    }
    }
  }

  size_t choose(size_t n) { return static_cast<size_t>(choices_.below(n)); }

  Choices& choices_;
  bool where_;
  std::vector<Value> values_;
  std::ostringstream body_;
};

} // namespace random_graph

// A random program (see the top of this file); with `where`, sometimes with a where clause
// that some shapes violate.
inline std::string random_graph_program(Choices& choices, bool where = false) {
  return random_graph::GraphGenerator(choices, where).program();
}

} // namespace dsc::testing
