#pragma once
// Test helpers for kernel code generation: prims parsed from .dsc text, compiled with
// cpu::KernelJit (O3 for the host CPU), and called on host vectors.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/KernelJit.h"
#include "ir/HostProgram.h"
#include "tests/unit/FrontendUtil.h"

namespace dsc::testing {

inline std::vector<Ref<ir::PrimFunc>> prims_of(const ir::Module& m) {
  std::vector<Ref<ir::PrimFunc>> prims;
  for (const ir::Module::Decl& d : m.decls)
    if (d.prim) prims.push_back(d.prim);
  return prims;
}

class CompiledPrims {
public:
  explicit CompiledPrims(const std::string& text, const cpu::KernelJitOptions& options = {}) {
    std::optional<ir::Module> m = parse_clean(text);
    if (!m) return;
    module_ = std::move(*m);
    std::vector<Ref<ir::PrimFunc>> prims = prims_of(module_);
    std::string error;
    jit_ = cpu::KernelJit::compile(prims, error, options);
    EXPECT_TRUE(jit_ != nullptr) << error;
    if (jit_) {
      EXPECT_EQ(jit_->diagnostics(), "") << "LLVM reported problems";
    }
  }

  bool ok() const { return jit_ != nullptr; }
  const cpu::KernelJit& jit() const { return *jit_; }

  // Calls prim `name` on `buffers` (its inputs then outputs) with the given symbol values.
  void run(const std::string& name, const std::vector<void*>& buffers,
           const std::map<std::string, int64_t>& symbols = {}) const {
    ASSERT_TRUE(jit_) << "not compiled";
    Ref<ir::PrimFunc> p = module_.prim(name);
    ASSERT_TRUE(p) << "no prim " << name;
    ASSERT_EQ(buffers.size(), p->inputs.size() + p->outputs.size()) << name;
    std::vector<int64_t> values;
    for (const std::string& s : ir::prim_signature_symbols(*p)) {
      auto it = symbols.find(s);
      ASSERT_TRUE(it != symbols.end()) << "no value for symbol " << s;
      values.push_back(it->second);
    }
    cpu::KernelFunction k = jit_->kernel(name);
    ASSERT_TRUE(k != nullptr) << name;
    k(buffers.data(), values.data());
  }

private:
  ir::Module module_;
  std::unique_ptr<cpu::KernelJit> jit_;
};

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Distance in units in the last place of float between `got` and the exact value `want`
// (a double): |got - want| / ulp(want), where ulp is that of float at want's magnitude
// (subnormal spacing below the normals).
inline double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : INFINITY;
  if (std::isinf(want) || std::isinf(got)) {
    if (got == want) return 0.0;
    // An infinity for a finite value beyond the largest float is fine when it rounds so.
    if (std::isinf(got) && std::fabs(want) >= 0x1.ffffffp127 && std::signbit(got) == std::signbit(want)) return 0.0;
    return INFINITY;
  }
  double a = std::fabs(want);
  int e = a < 0x1p-126 ? -126 : std::ilogb(a);
  double ulp = std::ldexp(1.0, e - 23);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

} // namespace dsc::testing
