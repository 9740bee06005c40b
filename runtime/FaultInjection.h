#pragma once
// Fault injection for tests (issue 40): each of the runtime's allocations (aligned_allocate,
// the GEMM's scratch) and each thread the pool starts first asks fail_now(site), and the k-th
// ask after arm(site, k) is told to fail, as if the system had refused. Disarmed, an ask is one
// relaxed atomic load. tests/unit/compiler/FaultInjectionTest.cpp fails every allocation of a
// model call in turn and requires a clean error, or the right result, every time.

#include <cstdint>

namespace dsc::runtime::faults {

enum class Site : int { Allocation = 0, ThreadStart = 1 };

// From now on, the k-th ask at `site` (1-based) fails; k = 0 only counts the asks.
void arm(Site site, int64_t k);
// Stops failing and counting at `site`.
void disarm(Site site);
// The asks at `site` since it was armed.
int64_t asks(Site site);
// Asked at each site: whether this allocation or thread start must fail.
bool fail_now(Site site);

} // namespace dsc::runtime::faults
