#include "runtime/FaultInjection.h"

#include <atomic>

namespace dsc::runtime::faults {

namespace {

struct Counter {
  std::atomic<bool> armed{false};
  std::atomic<int64_t> asks{0};
  std::atomic<int64_t> fail_at{0};
};

Counter counters[2];

Counter& counter(Site site) {
  return counters[static_cast<int>(site)];
}

} // namespace

void arm(Site site, int64_t k) {
  Counter& c = counter(site);
  c.asks.store(0);
  c.fail_at.store(k);
  c.armed.store(true);
}

void disarm(Site site) {
  counter(site).armed.store(false);
}

int64_t asks(Site site) {
  return counter(site).asks.load();
}

bool fail_now(Site site) {
  Counter& c = counter(site);
  if (!c.armed.load(std::memory_order_relaxed)) return false;
  int64_t n = c.asks.fetch_add(1) + 1;
  return n == c.fail_at.load();
}

} // namespace dsc::runtime::faults
