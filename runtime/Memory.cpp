#include "runtime/Memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "runtime/FaultInjection.h"
#include "runtime/Tensor.h"

namespace dsc::runtime {

bool checked_nbytes(DLDataType dtype, const std::vector<int64_t>& shape, uint64_t* bytes) {
  // Bound the product of the nonzero dims, so that Tensor::numel (which multiplies left to
  // right) cannot overflow either, even when a later dim is 0.
  const uint64_t itemsize = std::max<uint64_t>(dtype_bytes(dtype), 1);
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / itemsize;
  uint64_t nonzero = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (nonzero > limit / static_cast<uint64_t>(d)) return false;
    nonzero *= static_cast<uint64_t>(d);
  }
  *bytes = empty ? 0 : nonzero * dtype_bytes(dtype);
  return true;
}

uint64_t allocation_limit() {
  static const uint64_t limit = [] {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return static_cast<uint64_t>(1) << 40; // unknown: 1 TiB
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  }();
  return limit;
}

std::string describe_bytes(uint64_t bytes) {
  std::string exact = std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return exact;
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit + 1 < 6) {
    value /= 1024;
    ++unit;
  }
  char rounded[32];
  std::snprintf(rounded, sizeof rounded, "%.1f %s", value, kUnits[unit]);
  return exact + " (" + rounded + ")";
}

void* aligned_allocate(uint64_t bytes, const std::string& what, std::string* error) {
  auto fail = [&](const std::string& reason) -> void* {
    if (error) *error = "cannot allocate " + describe_bytes(bytes) + " for " + what + ": " + reason;
    return nullptr;
  };
  if (bytes > allocation_limit())
    return fail("the machine has " + describe_bytes(allocation_limit()) + " of memory");
  uint64_t rounded = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = faults::fail_now(faults::Site::Allocation)
                ? nullptr
                : std::aligned_alloc(kAlignment, static_cast<size_t>(rounded));
  if (!p) return fail("out of memory");
  return p;
}

} // namespace dsc::runtime
