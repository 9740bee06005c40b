// The table of intrinsics (ir/Intrinsics.def): every row is complete for what its domain and
// CPU lowering promise, and the CUDA column, which no backend reads yet, is filled in.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "ir/Intrinsics.h"

namespace dsc::ir {
namespace {

bool accepts_floats(IntrinsicDomain d) {
  return d == IntrinsicDomain::Float || d == IntrinsicDomain::Number ||
         d == IntrinsicDomain::Select || d == IntrinsicDomain::None;
}
bool accepts_ints(IntrinsicDomain d) {
  return d != IntrinsicDomain::Float;
}

TEST(IntrinsicsTable, IdsAndNamesAgree) {
  const std::vector<IntrinsicDef>& all = all_intrinsics();
  ASSERT_FALSE(all.empty());
  for (size_t i = 0; i < all.size(); ++i) {
    const IntrinsicDef& fn = all[i];
    EXPECT_EQ(static_cast<size_t>(fn.id), i) << fn.name;
    EXPECT_EQ(&intrinsic(fn.id), &fn) << fn.name;
    EXPECT_EQ(find_intrinsic(fn.name), &fn) << fn.name;
  }
  EXPECT_EQ(find_intrinsic("softplus"), nullptr);
}

TEST(IntrinsicsTable, EveryRowHasACudaSpellingForEachDtypeItAccepts) {
  for (const IntrinsicDef& fn : all_intrinsics()) {
    const std::vector<std::pair<const char*, bool>> columns = {
        {fn.cuda_f32, accepts_floats(fn.domain)},
        {fn.cuda_f64, accepts_floats(fn.domain)},
        {fn.cuda_int, accepts_ints(fn.domain)}};
    for (const auto& [spelling, accepted] : columns) {
      ASSERT_NE(spelling, nullptr) << fn.name;
      std::string s = spelling;
      EXPECT_EQ(s.empty(), !accepted) << fn.name << ": '" << s << "'";
      if (s.empty()) continue;
      // Every operand is used, and nothing past the arity.
      for (int k = 0; k < fn.arity; ++k)
        EXPECT_NE(s.find("$" + std::to_string(k)), std::string::npos) << fn.name << ": " << s;
      EXPECT_EQ(s.find("$" + std::to_string(fn.arity)), std::string::npos) << fn.name << ": " << s;
    }
  }
}

TEST(IntrinsicsTable, EveryPureRowHasAReferenceAndACpuLowering) {
  for (const IntrinsicDef& fn : all_intrinsics()) {
    if (!fn.pure()) {
      EXPECT_EQ(fn.domain, IntrinsicDomain::None) << fn.name;
      EXPECT_EQ(fn.arity, 0) << fn.name;
      continue;
    }
    EXPECT_GT(fn.arity, 0) << fn.name;
    EXPECT_NE(fn.domain, IntrinsicDomain::None) << fn.name;
    EXPECT_NE(fn.cpu, CpuLowering::Nothing) << fn.name << " has no value on the CPU";
    EXPECT_EQ(fn.reference != nullptr, accepts_floats(fn.domain)) << fn.name;
    EXPECT_EQ(fn.reference_int != nullptr, accepts_ints(fn.domain)) << fn.name;
    EXPECT_EQ(std::string(fn.llvm).empty(), fn.cpu != CpuLowering::LlvmIntrinsic) << fn.name;
    if (fn.domain == IntrinsicDomain::Select) {
      EXPECT_EQ(fn.arity, 3) << fn.name;
    }
  }
}

TEST(IntrinsicsTable, ReferencesComputeTheirFunctions) {
  double x = 0.5;
  EXPECT_DOUBLE_EQ(intrinsic(IntrinsicId::exp).reference(&x), std::exp(0.5));
  EXPECT_DOUBLE_EQ(intrinsic(IntrinsicId::rsqrt).reference(&x), 1.0 / std::sqrt(0.5));
  int64_t ints[] = {-3, 3};
  EXPECT_EQ(intrinsic(IntrinsicId::pow).reference_int(ints), -27);
  int64_t negative_exponent[] = {-1, -3};
  EXPECT_EQ(intrinsic(IntrinsicId::pow).reference_int(negative_exponent), -1);
  int64_t lowest = INT64_MIN;
  EXPECT_EQ(intrinsic(IntrinsicId::abs).reference_int(&lowest), INT64_MIN) << "wraps";
  double cond[] = {0.0, 1.0, 2.0};
  EXPECT_EQ(intrinsic(IntrinsicId::select).reference(cond), 2.0);
}

} // namespace
} // namespace dsc::ir
