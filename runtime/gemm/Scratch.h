#pragma once
// A 64-byte aligned float buffer that only grows: the GEMM's packing buffers and the chained
// products' block of A @ B (runtime/gemm/Gemm.cpp, Chain.cpp), one per thread and use.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace dsc::runtime::gemm {

class Scratch {
public:
  float* get(int64_t floats) {
    if (floats > capacity_) {
      int64_t want = std::max(floats, capacity_ * 2);
      size_t bytes = (static_cast<size_t>(want) * sizeof(float) + 63) / 64 * 64;
      data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      if (!data_) throw std::bad_alloc();
      capacity_ = want;
    }
    return data_.get();
  }

private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  int64_t capacity_ = 0;
};

} // namespace dsc::runtime::gemm
