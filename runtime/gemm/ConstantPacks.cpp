#include "runtime/gemm/ConstantPacks.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <tuple>

#include "runtime/FaultInjection.h"
#include "runtime/gemm/Packing.h"

namespace dsc::runtime::gemm {

namespace {

struct Range {
  uintptr_t end;
  std::map<ConstantFormKey, std::shared_ptr<const void>> forms;
};

struct Registry {
  std::shared_mutex mutex;
  std::map<uintptr_t, Range> ranges; // by start address
};

Registry& registry() {
  static Registry* r = new Registry; // never destroyed: products may run during exit
  return *r;
}

// The range holding [begin, end), or null.
Range* containing(Registry& r, uintptr_t begin, uintptr_t end) {
  auto it = r.ranges.upper_bound(begin);
  if (it == r.ranges.begin()) return nullptr;
  --it;
  return end <= it->second.end ? &it->second : nullptr;
}

std::shared_ptr<const float[]> pack_whole(const GemmKernels& K, const Product& p) {
  const int64_t nr = K.nr, nc_max = column_block(nr);
  std::shared_ptr<float[]> out(
      faults::fail_now(faults::Site::Allocation)
          ? nullptr
          : new (std::nothrow) float[static_cast<size_t>(packed_b_floats(K, p.n, p.k))]);
  if (!out) return nullptr; // no memory for the pack: the product packs as it goes
  for (int64_t j0 = 0; j0 < p.n; j0 += nc_max) {
    const int64_t nc = std::min(nc_max, p.n - j0);
    for (int64_t p0 = 0; p0 < p.k; p0 += kKc)
      pack_b(K, p, p0, std::min(kKc, p.k - p0), j0, nc,
             out.get() + packed_b_offset(K, j0, p0, p.n, p.k), 0, ceil_div(nc, nr));
  }
  return out;
}

} // namespace

bool declare_constant(const void* data, size_t bytes, std::string* error) {
  if (!data || bytes == 0) {
    *error = "constant memory must be a non-null pointer and a positive size";
    return false;
  }
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  if (bytes > UINTPTR_MAX - begin) {
    *error = "constant memory runs past the end of the address space";
    return false;
  }
  const uintptr_t end = begin + bytes;
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto next = r.ranges.lower_bound(begin);
  bool overlaps = (next != r.ranges.end() && next->first < end) ||
                  (next != r.ranges.begin() && std::prev(next)->second.end > begin);
  if (overlaps) {
    *error = "constant memory overlaps memory already declared constant";
    return false;
  }
  r.ranges.emplace(begin, Range{end, {}});
  return true;
}

bool release_constant(const void* data) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  return r.ranges.erase(reinterpret_cast<uintptr_t>(data)) > 0;
}

bool is_constant(const void* data, size_t bytes) {
  Registry& r = registry();
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  std::shared_lock lock(r.mutex);
  return !r.ranges.empty() && containing(r, begin, begin + bytes);
}

size_t constant_pack_count() {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  size_t n = 0;
  for (const auto& [begin, range] : r.ranges) n += range.forms.size();
  return n;
}

bool ConstantFormKey::operator<(const ConstantFormKey& o) const {
  return std::tie(data, n, k, row, col, maker, variant) <
         std::tie(o.data, o.n, o.k, o.row, o.col, o.maker, o.variant);
}

std::shared_ptr<const void> constant_form(const ConstantFormKey& key, size_t bytes,
                                          const std::function<std::shared_ptr<const void>()>& make) {
  Registry& r = registry();
  const uintptr_t begin = reinterpret_cast<uintptr_t>(key.data);
  const uintptr_t end = begin + bytes;
  {
    std::shared_lock lock(r.mutex);
    if (r.ranges.empty()) return nullptr;
    Range* range = containing(r, begin, end);
    if (!range) return nullptr;
    auto it = range->forms.find(key);
    if (it != range->forms.end()) return it->second;
  }
  std::unique_lock lock(r.mutex);
  Range* range = containing(r, begin, end); // released meanwhile?
  if (!range) return nullptr;
  auto [it, added] = range->forms.try_emplace(key);
  if (added) it->second = make();
  std::shared_ptr<const void> form = it->second;
  if (!form) range->forms.erase(it);
  return form;
}

std::shared_ptr<const float[]> constant_pack(const GemmKernels& K, const Product& p) {
  if (p.b_panels && !p.b_panels->data) return nullptr; // panels made anew each time
  const void* data = p.b_panels ? p.b_panels->data : p.b;
  const int64_t last = (p.k - 1) * p.b_row + (p.n - 1) * p.b_col; // B's last element
  const size_t bytes = p.b_panels ? p.b_panels->bytes : static_cast<size_t>((last + 1) * 4);
  const ConstantFormKey key{data, p.n, p.k, p.b_row, p.b_col, &K,
                            p.b_panels ? reinterpret_cast<uintptr_t>(p.b_panels->pack) : 0};
  std::shared_ptr<const void> pack =
      constant_form(key, bytes, [&] { return std::shared_ptr<const void>(pack_whole(K, p)); });
  return std::static_pointer_cast<const float[]>(pack);
}

} // namespace dsc::runtime::gemm
