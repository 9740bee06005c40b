#include "tools/dscc/Sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dsc::dscc {

Sampler::Sampler(SamplingOptions options) : options_(options), state_(options.seed) {}

// splitmix64: one 64-bit state, the same sequence everywhere.
double Sampler::uniform() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

int64_t Sampler::next(const float* logits, int64_t vocab) {
  if (options_.greedy) {
    // The first largest (a NaN is never larger, as in torch.argmax of finite rows).
    int64_t best = 0;
    for (int64_t v = 1; v < vocab; ++v)
      if (logits[v] > logits[best]) best = v;
    return best;
  }
  // Tokens by logit, largest first (ties by id), then the first top_k of them.
  order_.resize(static_cast<size_t>(vocab));
  std::iota(order_.begin(), order_.end(), int64_t{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  size_t kept = order_.size();
  if (options_.top_k > 0) kept = std::min(kept, static_cast<size_t>(options_.top_k));
  // Softmax of logits / temperature over the kept tokens.
  const double top = static_cast<double>(logits[order_[0]]) / options_.temperature;
  probs_.assign(kept, 0.0);
  double total = 0;
  for (size_t i = 0; i < kept; ++i) {
    probs_[i] = std::exp(static_cast<double>(logits[order_[i]]) / options_.temperature - top);
    total += probs_[i];
  }
  // top-p: the smallest prefix whose probability reaches top_p (at least one token).
  if (options_.top_p < 1.0) {
    double cumulative = 0;
    size_t n = 0;
    while (n < kept) {
      cumulative += probs_[n] / total;
      ++n;
      if (cumulative >= options_.top_p) break;
    }
    kept = n;
    total = 0;
    for (size_t i = 0; i < kept; ++i) total += probs_[i];
  }
  const double u = uniform() * total;
  double cumulative = 0;
  for (size_t i = 0; i < kept; ++i) {
    cumulative += probs_[i];
    if (u < cumulative) return order_[i];
  }
  return order_[kept - 1];
}

} // namespace dsc::dscc
