#pragma once
// A 64-byte aligned float buffer that only grows: the GEMM's packing buffers and the chained
// products' block of A @ B (runtime/gemm/Gemm.cpp, Chain.cpp), one per thread and use.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include "runtime/FaultInjection.h"

namespace dsc::runtime::gemm {

class Scratch {
public:
  float* get(int64_t floats) {
    if (floats > capacity_) {
      int64_t want = std::max(floats, capacity_ * 2);
      size_t bytes = (static_cast<size_t>(want) * sizeof(float) + 63) / 64 * 64;
      // On failure the buffer held so far stays, and std::bad_alloc goes to the routine's
      // entry point, which fails the call (runtime/RoutineFailure.h).
      auto* fresh = faults::fail_now(faults::Site::Allocation)
                        ? nullptr
                        : static_cast<float*>(std::aligned_alloc(64, bytes));
      if (!fresh) throw std::bad_alloc();
      data_.reset(fresh);
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
