// Generates the prover benchmark's corpus: shape questions of the kinds a compiler asks, one
// per line, as `ASSUMPTIONS ;; GOAL` in the syntax of symbolic/Parser.h. ASSUMPTIONS is a
// `&&`-joined list, or nothing. Lines starting with `#` are comments.
//
//   make_corpus [-o FILE] [--count N] [--seed S]   write the corpus (default: stdout)
//   make_corpus --verify FILE [--count N] [--seed S]  exit 1 unless FILE is what would be written
//
// The output depends only on the seed and the count: the random generator is written out here
// rather than taken from <random>, whose distributions differ between standard libraries. The
// questions are built to be true or false by construction, with a realistic share of false ones
// (a broadcast that needs a `where` clause, a tile count that is 0 for S == 0, a reshape whose
// element counts differ), so the prover's counterexample path is measured too.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

constexpr uint64_t kDefaultSeed = 20240601;
constexpr int kDefaultCount = 12000;

// splitmix64: tiny, fast and identical on every platform.
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi]; the modulo bias is far below anything a benchmark could notice.
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return range(0, 99) < percent; }
  template <typename T> const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(range(0, static_cast<int64_t>(items.size()) - 1))];
  }
  int64_t pick(std::initializer_list<int64_t> items) {
    return *(items.begin() + range(0, static_cast<int64_t>(items.size()) - 1));
  }
  template <typename T> void shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i > 1; --i)
      std::swap(items[i - 1], items[static_cast<size_t>(range(0, static_cast<int64_t>(i) - 1))]);
  }

private:
  uint64_t state_;
};

template <typename... Args> std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

struct Query {
  std::vector<std::string> assumptions;
  std::string goal;
};

Query query(std::string goal, std::vector<std::string> assumptions = {}) {
  return {std::move(assumptions), std::move(goal)};
}

// Dimension names as they appear in models: short capitals and a few spelled-out ones.
const std::vector<std::string> kDims = {
    "B", "S", "T", "N", "M",     "K",       "H",        "W",  "C",  "L",  "D",    "E",
    "F", "G", "P", "Q", "batch", "seq_len", "n_tokens", "d0", "d1", "d2", "H_in", "W_in"};
const std::vector<std::string> kIndices = {"i", "j", "k", "ii", "jj", "idx", "t0", "t1"};

// `count` distinct names from `pool`.
std::vector<std::string> distinct(Rng& rng, const std::vector<std::string>& pool, size_t count) {
  std::vector<std::string> all = pool;
  rng.shuffle(all);
  all.resize(count);
  return all;
}

std::string dim(Rng& rng) {
  return rng.pick(kDims);
}

int64_t hidden_size(Rng& rng) {
  return rng.pick({64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096, 5120, 8192});
}
int64_t small_const(Rng& rng) {
  return rng.pick({2, 3, 4, 6, 8, 12, 16, 32, 64, 128});
}
int64_t power_of_two(Rng& rng) {
  return rng.pick({2, 4, 8, 16, 32, 64, 128, 256});
}
int64_t upper_bound(Rng& rng) {
  return rng.pick({8, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 32768});
}

// ---- Products of dims: the element counts behind reshape, matmul and broadcast_to. ----

Query product_equality(Rng& rng) {
  std::vector<std::string> factors = distinct(rng, kDims, static_cast<size_t>(rng.range(2, 4)));
  if (rng.chance(70)) factors.push_back(cat(hidden_size(rng)));
  std::vector<std::string> other = factors;
  rng.shuffle(other);
  std::string lhs = join(factors, "*");
  if (rng.chance(65)) return query(cat(lhs, " == ", join(other, "*")));

  int how = static_cast<int>(rng.range(0, 3));
  if (how == 0) {
    // A dim that is missing on one side: false where it is not 1.
    other.erase(other.begin() + rng.range(0, static_cast<int64_t>(other.size()) - 1));
    if (other.empty()) other.push_back("1");
    return query(cat(lhs, " == ", join(other, "*")));
  }
  if (how == 1) {
    // One side names a different dim; true only when a fact unifies the two.
    std::vector<size_t> dims_at;
    for (size_t at = 0; at < other.size(); ++at) {
      if (std::isalpha(static_cast<unsigned char>(other[at][0]))) dims_at.push_back(at);
    }
    size_t at = rng.pick(dims_at);
    std::string was = other[at];
    std::string now = dim(rng);
    if (std::find(factors.begin(), factors.end(), now) != factors.end()) now = "U";
    other[at] = now;
    if (rng.chance(50)) return query(cat(lhs, " == ", join(other, "*")), {cat(was, " == ", now)});
    return query(cat(lhs, " == ", join(other, "*")));
  }
  if (how == 2) {
    // The product is non-zero only when every dim is.
    std::vector<std::string> facts;
    for (const std::string& f : factors) {
      if (std::isalpha(static_cast<unsigned char>(f[0]))) facts.push_back(cat(f, " >= 1"));
    }
    if (rng.chance(50)) return query(cat(lhs, " >= 1"), facts);
    return query(cat(lhs, " >= 1"));
  }
  // Grouped the way a reshape groups them.
  std::string grouped = cat("(", factors[0], "*", factors[1], ")");
  for (size_t i = 2; i < factors.size(); ++i)
    grouped += cat("*", factors[i]);
  return query(cat(grouped, " == ", join(other, "*")));
}

Query reshape(Rng& rng) {
  std::vector<std::string> d = distinct(rng, kDims, 3);
  int64_t head_dim = rng.pick({32, 64, 80, 96, 128});
  int64_t heads = rng.pick({1, 2, 4, 8, 12, 16, 20, 32, 40});
  int64_t hidden = heads * head_dim;
  switch (rng.range(0, 6)) {
  case 0:
    return query(
        cat(d[0], "*", d[1], "*", heads, "*", head_dim, " == ", d[0], "*", d[1], "*", hidden));
  case 1: // Wrong hidden size: a misconfigured head count.
    return query(cat(d[0], "*", d[1], "*", heads, "*", head_dim, " == ", d[0], "*", d[1], "*",
                     hidden + head_dim * rng.pick({1, -1, 2})));
  case 2: // Merging the batch and sequence dims.
    return query(cat("(", d[0], "*", d[1], ")*", hidden, " == ", d[0], "*", d[1], "*", heads, "*",
                     head_dim));
  case 3: // Inferring a `-1` entry: exact only when the divisor is not zero.
    if (rng.chance(60)) {
      return query(cat("(", d[0], "*", d[1], "*", hidden, ")/(", d[1], "*", hidden, ") == ", d[0]),
                   {cat(d[1], " >= 1")});
    }
    return query(cat("(", d[0], "*", d[1], "*", hidden, ")/(", d[1], "*", hidden, ") == ", d[0]));
  case 4: // Flattening NCHW.
    return query(cat(d[0], "*", d[1], "*", d[2], "*", hidden, " == ", d[0], "*(", d[1], "*", d[2],
                     "*", hidden, ")"));
  case 5: // A reshape that drops a dim.
    return query(cat(d[0], "*", d[1], "*", hidden, " == ", d[0], "*", hidden));
  default: // Heads split out of a dim already known to be a multiple.
    return query(cat("(", d[0], "/", heads, ")*", heads, " == ", d[0]),
                 {cat(d[0], " % ", heads, " == 0")});
  }
}

// ---- Sums: concat, split and pad. ----

Query sums(Rng& rng) {
  std::vector<std::string> d = distinct(rng, kDims, 3);
  int64_t c = small_const(rng);
  switch (rng.range(0, 9)) {
  case 0:
    return query(cat(d[0], " + ", d[1], " == ", d[1], " + ", d[0]));
  case 1:
    return query(
        cat("(", d[0], " + ", d[1], ") + ", d[2], " == ", d[0], " + (", d[1], " + ", d[2], ")"));
  case 2:
    return query(cat(d[0], " + ", d[1], " - ", d[1], " == ", d[0]));
  case 3:
    return query(
        cat("2*(", d[0], " + ", d[1], ") == ", d[0], " + ", d[0], " + ", d[1], " + ", d[1]));
  case 4: // Concatenating a tensor with itself is not the same as with another.
    return query(cat(d[0], " + ", d[1], " == 2*", d[0]));
  case 5:
    return query(cat(d[0], " + ", d[1], " == 2*", d[0]), {cat(d[1], " == ", d[0])});
  case 6:
    return query(cat(d[0], " + ", d[1], " >= ", d[0]));
  case 7:
    return query(cat(d[0], " - ", d[1], " >= 0"));
  case 8:
    return query(cat(d[0], " - ", d[1], " >= 0"), {cat(d[1], " <= ", d[0])});
  default: // Padding both sides.
    return query(cat(d[0], " + ", c, " + ", c, " == ", d[0], " + ", 2 * c));
  }
}

// ---- Broadcasting: dims must be equal or 1. ----

Query broadcast(Rng& rng) {
  std::vector<std::string> d = distinct(rng, kDims, 3);
  const std::string &x = d[0], &y = d[1], &z = d[2];
  switch (rng.range(0, 11)) {
  case 0:
    return query(cat(x, " == ", y), {cat(x, " == ", y)});
  case 1:
    return query(cat(x, " == ", y), {cat(y, " == ", x)});
  case 2:
    return query(cat(x, " == ", y), {cat(x, " == ", z), cat(z, " == ", y)});
  case 3: // Two inputs whose dims were never related.
    return query(cat(x, " == ", y));
  case 4:
    return query(cat(x, " == ", y), {cat(x, " == ", y, " + 1")});
  case 5:
    return query(cat(x, " == 1"), {cat(x, " == 1")});
  case 6:
    return query(cat(x, " == 1"), {cat("1 <= ", x, " <= 1")});
  case 7:
    return query(cat(x, " == 1"));
  case 8:
    return query(cat(x, " == 1"), {cat(x, " <= 1")});
  case 9:
    return query(cat(x, " == ", y, " || ", x, " == 1 || ", y, " == 1"),
                 {rng.chance(50) ? cat(y, " == 1") : cat(x, " == ", y)});
  case 10:
    return query(cat(x, " == ", y, " || ", x, " == 1 || ", y, " == 1"));
  default: // The broadcast result dim.
    if (rng.chance(60))
      return query(cat("max(", x, ", ", y, ") == ", x), {cat(y, " == 1"), cat(x, " >= 1")});
    return query(cat("max(", x, ", ", y, ") == ", x));
  }
}

// ---- Division and modulo by constants. ----

Query div_mod(Rng& rng) {
  std::string n = rng.pick(std::vector<std::string>{"n", "m", "N", "S", "T", "K", "seq_len"});
  int64_t c = power_of_two(rng);
  int64_t k = rng.range(1, 6);
  int64_t r = rng.range(0, c - 1);
  switch (rng.range(0, 15)) {
  case 0:
    return query(cat("(", c * k, "*", n, ")/", c, " == ", k, "*", n));
  case 1:
    return query(cat("(", 2 * c, "*", n, " + ", c, ") % ", c, " == 0"));
  case 2:
    return query(cat("(", 2 * c, "*", n, " + ", c, ") % ", 2 * c, " == 0"));
  case 3:
    return query(cat("(", c, "*", n, " + ", r, ") % ", c, " == ", r));
  case 4:
    return query(cat("(", c, "*", n, " + ", r, ") % ", c, " == ", r + 1));
  case 5:
    return query(cat("(", c, "*", n, " + ", r, ")/", c, " == ", n));
  case 6:
    return query(cat(n, "/", c, "*", c, " == ", n));
  case 7:
    return query(cat(n, "/", c, "*", c, " == ", n), {cat(n, " % ", c, " == 0")});
  case 8:
    return query(cat(n, "/", c, "*", c, " == ", n), {cat(n, " % ", 2 * c, " == 0")});
  case 9:
    return query(cat(n, "/", c, "*", c, " == ", n),
                 {cat(n, " % ", c / 2 == 1 ? 3 : c / 2, " == 0")});
  case 10:
    return query(cat(n, " % ", c, " < ", c));
  case 11:
    return query(cat(n, " % ", c, " <= ", c - 2));
  case 12:
    return query(cat(n, "/", c, " <= ", n));
  case 13:
    if (rng.chance(50)) return query(cat(n, "/", c, " < ", n), {cat(n, " >= 1")});
    return query(cat(n, "/", c, " < ", n));
  case 14:
    return query(cat(n, " % ", c, " + ", n, "/", c, "*", c, " == ", n));
  default:
    return query(cat("(", n, " + ", c - 1, ")/", c, "*", c, " - ", n, " < ", c));
  }
}

// ---- Tiling: loop extents rounded to a tile. ----

Query tiling(Rng& rng) {
  std::string s = dim(rng);
  int64_t t = power_of_two(rng);
  std::string ceil_tiles = cat("(", s, " + ", t - 1, ")/", t);
  switch (rng.range(0, 11)) {
  case 0:
    return query(cat(ceil_tiles, "*", t, " >= ", s));
  case 1:
    return query(cat(ceil_tiles, "*", t, " < ", s, " + ", t));
  case 2:
    return query(cat(s, "/", t, "*", t, " <= ", s));
  case 3:
    return query(cat(s, "/", t, "*", t, " > ", s, " - ", t));
  case 4:
    return query(cat(ceil_tiles, "*", t, " == ", s));
  case 5:
    return query(cat(ceil_tiles, "*", t, " == ", s), {cat(s, " % ", t, " == 0")});
  case 6:
    return query(cat(ceil_tiles, "*", t, " > ", s));
  case 7:
    if (rng.chance(60)) return query(cat(ceil_tiles, " >= 1"), {cat(s, " >= 1")});
    return query(cat(ceil_tiles, " >= 1"));
  case 8: {
    int64_t hi = t * rng.pick({1, 2, 4, 8, 16, 64});
    return query(cat(ceil_tiles, " <= ", hi / t), {cat("1 <= ", s, " <= ", hi)});
  }
  case 9: { // The last tile's index stays inside the padded extent.
    std::vector<std::string> ij = distinct(rng, kIndices, 2);
    return query(cat(ij[0], "*", t, " + ", ij[1], " < ", ceil_tiles, "*", t),
                 {cat(ij[0], " < ", ceil_tiles), cat(ij[1], " < ", t)});
  }
  case 10: { // ... but not inside the unpadded one: that needs a guard.
    std::vector<std::string> ij = distinct(rng, kIndices, 2);
    return query(cat(ij[0], "*", t, " + ", ij[1], " < ", s),
                 {cat(ij[0], " < ", ceil_tiles), cat(ij[1], " < ", t)});
  }
  default: // Rounding up by one too few.
    return query(cat("(", s, " + ", t - 2, ")/", t, "*", t, " >= ", s));
  }
}

// ---- Bounds checks that the compiler wants to remove. ----

Query bounds_check(Rng& rng) {
  std::vector<std::string> d = distinct(rng, kDims, 2);
  std::vector<std::string> ij = distinct(rng, kIndices, 2);
  const std::string &i = ij[0], &j = ij[1], &s = d[0], &t = d[1];
  int64_t c = rng.range(1, 8);
  switch (rng.range(0, 15)) {
  case 0:
    return query(cat(i, " < ", s), {cat("0 <= ", i), cat(i, " < ", s, " - 1")});
  case 1:
    return query(cat(i, " < ", s), {cat(i, " + 1 < ", s)});
  case 2:
    return query(cat(i, " < ", s), {cat(i, " <= ", s)});
  case 3:
    return query(cat(i, " + 1 <= ", s), {cat(i, " < ", s)});
  case 4:
    return query(cat(i, " + 1 < ", s), {cat(i, " < ", s)});
  case 5:
    return query(cat(i, " + ", c, " < ", s, " + ", c), {cat(i, " < ", s)});
  case 6:
    return query(cat(i, " - 1 < ", s), {cat(i, " < ", s)});
  case 7:
    return query(cat(i, " < ", s), {cat(i, " < ", t), cat(t, " <= ", s)});
  case 8:
    return query(cat(i, " < ", s), {cat(i, " < ", t)});
  case 9: // A slice window inside its source.
    return query(cat(j, " + ", i, " < ", s), {cat(i, " < ", t), cat(j, " + ", t, " <= ", s)});
  case 10:
    return query(cat(j, " + ", i, " < ", s),
                 {cat(i, " < ", t), cat(j, " + ", t, " <= ", s, " + 1")});
  case 11: // Flattened 2-D index with a constant row length.
    return query(cat(i, "*", c + 1, " + ", j, " < ", c + 1, "*", s),
                 {cat(i, " < ", s), cat(j, " < ", c + 1)});
  case 12:
    return query(cat(i, "*", c + 1, " + ", j, " < ", c + 1, "*", s),
                 {cat(i, " < ", s), cat(j, " <= ", c + 1)});
  case 13: // Flattened 2-D index with a symbolic row length.
    return query(cat(i, "*", t, " + ", j, " < ", s, "*", t), {cat(i, " < ", s), cat(j, " < ", t)});
  case 14: // Strided access.
    if (rng.chance(50)) return query(cat("2*", i, " + 1 < 2*", s), {cat(i, " < ", s)});
    return query(cat("2*", i, " + 2 < 2*", s), {cat(i, " < ", s)});
  default: // Reading a padded input.
    if (rng.chance(50))
      return query(cat(i, " - ", c, " < ", s, " + ", c), {cat(i, " < ", s, " + ", 2 * c)});
    return query(cat(i, " - ", c, " < ", s), {cat(i, " < ", s, " + ", 2 * c)});
  }
}

// ---- Convolution and pooling output sizes. ----

Query conv(Rng& rng) {
  std::string h = rng.pick(std::vector<std::string>{"H", "W", "H_in", "W_in", "L", "T"});
  int64_t k = rng.pick({1, 3, 3, 3, 5, 7});
  int64_t s = rng.pick({1, 1, 2, 2, 3, 4});
  int64_t p = rng.range(0, 3);
  int64_t d = rng.pick({1, 1, 1, 2});
  std::string out = cat("(", h, " + 2*", p, " - ", d, "*(", k, " - 1) - 1)/", s, " + 1");
  // The smallest input for which the output is not empty.
  int64_t need = std::max<int64_t>(0, d * (k - 1) + 1 - 2 * p);
  switch (rng.range(0, 7)) {
  case 0:
    return query(cat(out, " >= 1"), {cat(h, " >= ", need)});
  case 1: // A where clause that is too weak.
    if (need == 0) return query(cat(out, " >= 1"), {cat(h, " >= 0")});
    return query(cat(out, " >= 1"), {cat(h, " >= ", need - 1)});
  case 2:
    return query(cat(out, " <= ", h), {cat(h, " >= ", std::max<int64_t>(need, 1))});
  case 3: // Two ways to write the output of a "same" pooling.
    return query(cat("(", h, " + ", s - 1, ")/", s, " == (", h, " - 1)/", s, " + 1"));
  case 4:
    return query(cat(out, " >= 0"));
  case 5: { // Symbolic stride and kernel.
    std::vector<std::string> sk = distinct(rng, {"stride", "kernel", "pad", "R"}, 3);
    std::string sym_out = cat("(", h, " + 2*", sk[2], " - ", sk[1], ")/", sk[0], " + 1");
    if (rng.chance(60)) {
      return query(cat(sym_out, " >= 1"),
                   {cat(sk[0], " >= 1"), cat(h, " + 2*", sk[2], " >= ", sk[1])});
    }
    return query(cat(sym_out, " >= 1"), {cat(sk[0], " >= 1")});
  }
  case 6: { // Transposed convolution recovers the input size when stride divides it.
    return query(cat("((", h, " - 1)*", s, " - 2*", p, " + ", d, "*(", k, " - 1) + 1) >= ", h),
                 {cat(h, " >= 1")});
  }
  default:
    return query(cat(out, " <= ", h, " + ", 2 * p), {cat(h, " >= ", need)});
  }
}

// ---- Memory reuse: does one buffer fit in another? ----

Query memory_reuse(Rng& rng) {
  std::vector<std::string> d = distinct(rng, kDims, 3);
  int64_t small = hidden_size(rng);
  int64_t factor = rng.pick({2, 3, 4, 8});
  int64_t big = small * factor;
  std::string bs = cat(d[0], "*", d[1]);
  switch (rng.range(0, 9)) {
  case 0:
    return query(cat(bs, "*", small, " <= ", bs, "*", big));
  case 1:
    return query(cat(bs, "*", big, " <= ", bs, "*", small));
  case 2: // f16 buffer into an f32 one of a wider layer.
    return query(cat(bs, "*", small, "*2 <= ", bs, "*", big, "*4"));
  case 3:
    return query(cat(d[0], "*", d[2], " <= ", d[0], "*", d[0]), {cat(d[2], " <= ", d[0])});
  case 4:
    return query(cat(d[0], "*", d[2], " <= ", d[0], "*", d[0]));
  case 5:
    return query(cat(bs, "*", small, " <= ", d[0], "*", d[2], "*", small),
                 {cat(d[1], " <= ", d[2])});
  case 6: { // Attention scores against an MLP buffer; fits only for short sequences.
    int64_t heads = rng.pick({8, 12, 16});
    int64_t limit = big / heads;
    int64_t bound = rng.chance(50) ? limit : limit * 2;
    return query(cat(d[0], "*", heads, "*", d[1], "*", d[1], " <= ", bs, "*", big),
                 {cat(d[1], " <= ", bound)});
  }
  case 7:
    return query(cat(bs, "*", small, " + ", bs, "*", small, " <= ", bs, "*", 2 * small));
  case 8: // A header plus payload fits only when the payload is large.
    return query(cat(d[0], "*4 + 64 <= ", d[0], "*8"), {cat(d[0], " >= 16")});
  default:
    return query(cat(d[0], "*4 + 64 <= ", d[0], "*8"));
  }
}

// ---- min and max: clamps, chunking. ----

Query min_max(Rng& rng) {
  std::vector<std::string> d = distinct(rng, kDims, 2);
  const std::string &s = d[0], &t = d[1];
  int64_t c = upper_bound(rng);
  switch (rng.range(0, 12)) {
  case 0:
    return query(cat("min(", s, ", ", c, ") <= ", c));
  case 1:
    return query(cat("min(", s, ", ", c, ") <= ", s));
  case 2:
    return query(cat("max(", s, ", 1) >= 1"));
  case 3:
    return query(cat("max(", s, ", ", t, ") >= ", s));
  case 4:
    return query(cat("min(", s, ", ", c, ") == ", s), {cat(s, " <= ", c)});
  case 5:
    return query(cat("min(", s, ", ", c, ") == ", s));
  case 6:
    return query(cat("max(", s, ", ", c, ") == ", s), {cat(s, " >= ", c)});
  case 7:
    return query(cat("min(", s, ", ", t, ") + max(", s, ", ", t, ") == ", s, " + ", t));
  case 8:
    if (rng.chance(50)) return query(cat("min(", s, ", ", c, ") >= 1"), {cat(s, " >= 1")});
    return query(cat("min(", s, ", ", c, ") >= 1"));
  case 9:
    return query(cat("min(", s, ", ", c, ") < ", c));
  case 10:
    return query(cat("max(", s, " - ", c, ", 0) + min(", s, ", ", c, ") == ", s));
  case 11: {
    int64_t other = rng.chance(50) ? c * 2 : c / 2;
    return query(cat("min(", s, ", ", c, ") <= ", other));
  }
  default:
    return query(cat("max(", s, ", ", t, ") == ", s), {cat(t, " <= ", s)});
  }
}

// ---- Ranges from `where lo <= S <= hi`. ----

Query ranges(Rng& rng) {
  std::vector<std::string> d = distinct(rng, kDims, 2);
  const std::string &s = d[0], &t = d[1];
  int64_t lo = rng.pick({0, 1, 1, 1, 2});
  int64_t hi = upper_bound(rng);
  int64_t k = small_const(rng);
  std::vector<std::string> where;
  if (rng.chance(70)) {
    where.push_back(cat(lo, " <= ", s, " <= ", hi));
  } else {
    where.push_back(cat(s, " >= ", lo));
    where.push_back(cat(s, " <= ", hi));
  }
  switch (rng.range(0, 13)) {
  case 0:
    return query(cat(s, "*", k, " <= ", hi * k), where);
  case 1:
    return query(cat(s, " < ", hi), where);
  case 2:
    return query(cat(s, " - 1 >= 0"), where);
  case 3:
    return query(cat(s, "*", s, " <= ", hi * hi), where);
  case 4:
    return query(cat(s, "/16 <= ", hi / 16), where);
  case 5:
    return query(cat("(", s, " + 63)/64 <= ", (hi + 63) / 64), where);
  case 6:
    return query(cat(s, " % 8 == 0"), where);
  case 7:
    return query(cat(s, "*", t, " <= ", hi, "*", t), where);
  case 8:
    return query(cat(s, " <= ", hi - 1), where);
  case 9:
    return query(cat(s, " >= ", lo + 1), where);
  case 10: { // Two ranged dims.
    int64_t hb = rng.pick({8, 16, 32, 64});
    where.push_back(cat("1 <= ", t, " <= ", hb));
    return query(cat(s, "*", t, " <= ", hi * hb - (rng.chance(50) ? 0 : 1)), where);
  }
  case 11:
    return query(cat(s, " + ", t, " <= ", hi, " + ", t), where);
  case 12:
    return query(cat("min(", s, ", ", hi, ") == ", s), where);
  default:
    return query(cat(s, " != ", hi + 1), where);
  }
}

// ---- split, chunk and attention head arithmetic. ----

Query split(Rng& rng) {
  std::string s = dim(rng);
  int64_t n = rng.pick({2, 3, 4, 8});
  switch (rng.range(0, 7)) {
  case 0:
    return query(cat(s, "/2 + (", s, " - ", s, "/2) == ", s));
  case 1:
    return query(cat(s, "/2 + ", s, "/2 == ", s));
  case 2:
    return query(cat(s, "/2 + ", s, "/2 == ", s), {cat(s, " % 2 == 0")});
  case 3:
    return query(cat("(", n, "*", s, ")/", n, " == ", s));
  case 4:
    return query(cat(s, "/", n, "*", n, " + ", s, " % ", n, " == ", s));
  case 5:
    return query(cat(s, " - ", s, "/2 >= ", s, "/2"));
  case 6:
    return query(cat(s, " - ", s, "/2 == ", s, "/2"));
  default:
    return query(cat(s, "/", n, " + ", s, "/", n, " + ", s, "/", n, " <= ", s));
  }
}

// ---- slice lengths. ----

Query slice(Rng& rng) {
  std::vector<std::string> d = distinct(rng, kDims, 1);
  std::vector<std::string> be = distinct(rng, {"b", "e", "start", "end", "lo", "hi"}, 2);
  const std::string &s = d[0], &b = be[0], &e = be[1];
  int64_t step = rng.pick({1, 2, 3});
  switch (rng.range(0, 6)) {
  case 0:
    return query(cat("min(", e, ", ", s, ") - min(", b, ", ", s, ") >= 0"), {cat(b, " <= ", e)});
  case 1:
    return query(cat("min(", e, ", ", s, ") - min(", b, ", ", s, ") >= 0"));
  case 2:
    return query(cat("(", s, " - ", b, ") + ", b, " == ", s));
  case 3:
    return query(cat("(", e, " - ", b, " + ", step - 1, ")/", step, " <= ", s),
                 {cat(b, " <= ", e), cat(e, " <= ", s)});
  case 4:
    return query(cat("(", e, " - ", b, " + ", step - 1, ")/", step, " >= 1"),
                 {cat(b, " <= ", e), cat(e, " <= ", s)});
  case 5:
    return query(cat(s, " - 1 < ", s));
  default:
    return query(cat(e, " - ", b, " <= ", s), {cat(e, " <= ", s)});
  }
}

// ---- Dims tied by a binding (`let y: f32[N] = ...`, `N == 2*M`). ----

Query bindings(Rng& rng) {
  std::vector<std::string> d = distinct(rng, kDims, 3);
  const std::string &n = d[0], &m = d[1], &o = d[2];
  int64_t c = rng.pick({2, 3, 4, 8});
  switch (rng.range(0, 8)) {
  case 0:
    return query(cat(n, "/", c, " == ", m), {cat(n, " == ", c, "*", m)});
  case 1:
    return query(cat(n, " % ", c, " == 0"), {cat(n, " == ", c, "*", m)});
  case 2:
    return query(cat(n, " == ", m, " + ", m), {cat(n, " == 2*", m)});
  case 3:
    return query(cat(n, " == ", m), {cat(n, " == ", c, "*", m)});
  case 4:
    return query(cat(n, " - 1 == ", m), {cat(n, " == ", m, " + 1")});
  case 5:
    return query(cat(n, " > ", m), {cat(n, " == ", m, " + 1")});
  case 6:
    return query(cat(n, "*768 == ", m, "*", o, "*768"), {cat(n, " == ", m, "*", o)});
  case 7:
    return query(cat(n, "/", o, " == ", m), {cat(n, " == ", m, "*", o), cat(o, " >= 1")});
  default:
    return query(cat(n, "/", o, " == ", m), {cat(n, " == ", m, "*", o)});
  }
}

struct Family {
  const char* name;
  int weight;
  Query (*make)(Rng&);
};

const Family kFamilies[] = {
    {"product", 10, product_equality},
    {"reshape", 9, reshape},
    {"sums", 6, sums},
    {"broadcast", 10, broadcast},
    {"div_mod", 12, div_mod},
    {"tiling", 11, tiling},
    {"bounds_check", 11, bounds_check},
    {"conv", 7, conv},
    {"memory_reuse", 7, memory_reuse},
    {"min_max", 7, min_max},
    {"ranges", 8, ranges},
    {"split", 4, split},
    {"slice", 4, slice},
    {"bindings", 4, bindings},
};

const Family& pick_family(Rng& rng) {
  int total = 0;
  for (const Family& f : kFamilies)
    total += f.weight;
  int64_t at = rng.range(0, total - 1);
  for (const Family& f : kFamilies) {
    if (at < f.weight) return f;
    at -= f.weight;
  }
  return kFamilies[0];
}

std::string generate(uint64_t seed, int count) {
  Rng rng(seed);
  std::string out = cat("# Shape queries for bench_symbolic: ASSUMPTIONS ;; GOAL per line.\n",
                        "# Generated by bench/symbolic/make_corpus.cpp (seed ", seed, ", count ",
                        count, "); regenerate, do not edit.\n");
  std::unordered_set<std::string> seen;
  // Duplicates are dropped so that a cache cannot flatter the numbers; the families have far
  // more distinct instances than any sensible count, so this always terminates.
  for (int made = 0, tries = 0; made < count && tries < count * 100; ++tries) {
    Query q = pick_family(rng).make(rng);
    std::string line = cat(join(q.assumptions, " && "), " ;; ", q.goal);
    if (q.assumptions.empty()) line = cat(";; ", q.goal);
    if (!seen.insert(line).second) continue;
    out += line;
    out += '\n';
    ++made;
  }
  return out;
}

int usage() {
  std::cerr << "usage: make_corpus [-o FILE | --verify FILE] [--count N] [--seed S]\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  std::string output, verify;
  uint64_t seed = kDefaultSeed;
  int count = kDefaultCount;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    std::string value = argv[++i];
    if (arg == "-o") {
      output = value;
    } else if (arg == "--verify") {
      verify = value;
    } else if (arg == "--count") {
      count = std::atoi(value.c_str());
    } else if (arg == "--seed") {
      seed = std::strtoull(value.c_str(), nullptr, 10);
    } else {
      return usage();
    }
  }
  if (count <= 0) return usage();

  std::string corpus = generate(seed, count);
  if (!verify.empty()) {
    std::ifstream in(verify, std::ios::binary);
    std::string existing((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::cerr << "make_corpus: cannot read " << verify << "\n";
      return 1;
    }
    if (existing != corpus) {
      std::cerr << "make_corpus: " << verify
                << " is not what make_corpus generates; regenerate it with `make_corpus -o "
                << verify << "`\n";
      return 1;
    }
    return 0;
  }
  if (output.empty()) {
    std::cout << corpus;
    return std::cout.good() ? 0 : 1;
  }
  std::ofstream out(output, std::ios::binary);
  out << corpus;
  if (!out.good()) {
    std::cerr << "make_corpus: cannot write " << output << "\n";
    return 1;
  }
  return 0;
}
