#pragma once
// Random tensors and byte-level mutations for the file-format tests (.npy, .safetensors).

#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "runtime/Tensor.h"

namespace dsc::runtime::testing {

// Random bytes for every element (0 or 1 for bools).
inline Tensor random_tensor(DLDataType dtype, std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t = Tensor::zeros(dtype, std::move(shape));
  auto* p = static_cast<unsigned char*>(t.data());
  bool is_bool = same_dtype(dtype, dl_bool());
  for (size_t k = 0; k < t.nbytes(); ++k)
    p[k] = static_cast<unsigned char>(is_bool ? rng() % 2 : rng());
  return t;
}

// One to four random mutations of `bytes`: flip a bit, overwrite a byte, truncate, erase a
// run, `splice` (the format's own insertion, which knows where its parser looks), append.
inline void mutate(std::string& bytes, std::mt19937& rng,
                   const std::function<void(std::string&)>& splice) {
  int mutations = 1 + static_cast<int>(rng() % 4);
  for (int m = 0; m < mutations && !bytes.empty(); ++m) {
    size_t pos = rng() % bytes.size();
    switch (rng() % 6) {
    case 0: bytes[pos] = static_cast<char>(bytes[pos] ^ (1 << (rng() % 8))); break;
    case 1: bytes[pos] = static_cast<char>(rng()); break;
    case 2: bytes.resize(pos); break;
    case 3: bytes.erase(pos, 1 + rng() % 8); break;
    case 4: splice(bytes); break;
    case 5: bytes += static_cast<char>(rng()); break;
    }
  }
}

} // namespace dsc::runtime::testing
