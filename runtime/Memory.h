#pragma once
// Checked sizes and aligned allocations for everything the runtime allocates on behalf of a
// caller (tensors, outputs, the per-call arena). A size that overflows, or that is larger
// than the machine's physical memory, is an error message, never an abort: shapes come from
// user input.

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dsc::runtime {

// Every tensor and arena is aligned to this many bytes (a cache line, and enough for any
// vector load compiled code emits).
constexpr size_t kAlignment = 64;

// The byte size of a dense tensor of `dtype` and `shape`; false when a dim is negative or the
// element count or byte size overflows int64.
bool checked_nbytes(DLDataType dtype, const std::vector<int64_t>& shape, uint64_t* bytes);

// The most the runtime will try to allocate at once: the machine's physical memory.
uint64_t allocation_limit();

// "157286400000 bytes (146.5 GiB)": the exact count, and a rounded one for people.
std::string describe_bytes(uint64_t bytes);

// `bytes` bytes (at least kAlignment, rounded up to a multiple of it), aligned to kAlignment;
// released with std::free. Null with *error set ("cannot allocate 1099511627776 bytes (1.0 TiB)
// for <what>: ...") when the size exceeds allocation_limit() or the system refuses.
void* aligned_allocate(uint64_t bytes, const std::string& what, std::string* error);

} // namespace dsc::runtime
