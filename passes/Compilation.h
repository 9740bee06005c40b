#pragma once
// What the pipeline transforms: the module, the entry functions to compile, their host
// programs once lower_host has run, and which invariants (passes/Invariants.def) hold.

#include <cstdint>
#include <string>
#include <vector>

#include "ir/HostProgram.h"
#include "ir/Module.h"

namespace dsc::passes {

enum class Invariant : uint8_t {
#define DSC_INVARIANT(kind, name, meaning) kind,
#include "passes/Invariants.def"
};

// A set of invariants, one bit each.
class Invariants {
public:
  Invariants() = default;
  Invariants(std::initializer_list<Invariant> list) {
    for (Invariant i : list) bits_ |= bit(i);
  }
  bool has(Invariant i) const { return bits_ & bit(i); }
  bool has_any(Invariants other) const { return (bits_ & other.bits_) != 0; }
  Invariants missing_from(Invariants held) const {
    Invariants out;
    out.bits_ = bits_ & ~held.bits_;
    return out;
  }
  Invariants& operator|=(Invariants other) {
    bits_ |= other.bits_;
    return *this;
  }
  bool empty() const { return bits_ == 0; }
  // "typed, inlined"
  std::string to_string() const;

private:
  static uint32_t bit(Invariant i) { return 1u << static_cast<unsigned>(i); }
  uint32_t bits_ = 0;
};

const char* invariant_name(Invariant i);

struct Compilation {
  ir::Module module;
  // The fns lower_host compiles (and the only ones kept once calls are inlined); empty: all of
  // them are kept, and lower_host has nothing to do.
  std::vector<std::string> entries;
  std::vector<ir::HostProgram> hosts; // after lower_host: one per entry, in order
  Invariants holds;
};

} // namespace dsc::passes
