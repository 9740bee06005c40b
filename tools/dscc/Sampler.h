#pragma once
// The next token from a row of logits, as `dscc generate` picks it: greedily (the first
// largest logit), or sampled after transformers' warpers in their order (temperature, then
// top-k, then top-p, keeping at least one token) from a seeded generator of its own, so that a
// seed gives the same tokens on every machine (not the tokens torch's generator would give).

#include <cstdint>
#include <vector>

namespace dsc::dscc {

struct SamplingOptions {
  bool greedy = true;
  double temperature = 1.0; // > 0
  int64_t top_k = 0;        // 0: all tokens
  double top_p = 1.0;       // in (0, 1]
  uint64_t seed = 0;
};

class Sampler {
public:
  explicit Sampler(SamplingOptions options);
  // The token for one row of `vocab` logits.
  int64_t next(const float* logits, int64_t vocab);

private:
  double uniform(); // in [0, 1)
  SamplingOptions options_;
  uint64_t state_;
  std::vector<int64_t> order_; // scratch: token ids by logit
  std::vector<double> probs_;  // scratch
};

} // namespace dsc::dscc
