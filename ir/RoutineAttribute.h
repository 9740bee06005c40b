#pragma once
// A constant a library routine takes besides its buffers, written after its symbol in an
// extern: `= "cudnn.conv2d"(stride = [2, 2], padding = [3, 3], dilation = [1, 1], groups = [1])`.
// Which attributes a routine takes, in which order, is its table's (ir/LibraryRoutines.def);
// what their values may be is its scalar-argument function's (ir/LibraryRoutine.cpp).

#include <cstdint>
#include <string>
#include <vector>

namespace dsc::ir {

struct RoutineAttribute {
  std::string name;
  std::vector<int64_t> values;
  bool operator==(const RoutineAttribute&) const = default;
};

} // namespace dsc::ir
