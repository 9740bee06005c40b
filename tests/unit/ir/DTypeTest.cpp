// The dtype table (ir/DTypes.def) as the compiler sees it: every dtype round-trips through its
// name and its DLPack type, and the derived predicates agree with the table.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ir/DLDataType.h"
#include "ir/Type.h"

namespace dsc::ir {
namespace {

TEST(DTypeTest, RoundTrips) {
  std::set<std::string> names;
  for (DType d : kAllDTypes) {
    const std::string name = dtype_name(d);
    EXPECT_TRUE(names.insert(name).second) << name << " twice";
    EXPECT_EQ(parse_dtype(name), d) << name;
    DLDataType dl = to_dl(d);
    EXPECT_EQ(dl.bits, dtype_bits(d)) << name;
    EXPECT_EQ(dl.lanes, 1) << name;
    EXPECT_EQ(from_dl(dl), d) << name;
    EXPECT_FALSE(is_float(d) && is_int(d)) << name;
    EXPECT_EQ(dtype_bits(d) % 8, 0) << name;
  }
  EXPECT_EQ(names.size(), std::size(kAllDTypes));
  EXPECT_EQ(dtype_names().size(), std::size(kAllDTypes));
}

TEST(DTypeTest, Table) {
  EXPECT_EQ(std::string(dtype_name(DType::BF16)), "bf16");
  EXPECT_EQ(dtype_bits(DType::Bool), 8);
  EXPECT_TRUE(is_float(DType::BF16));
  EXPECT_TRUE(is_int(DType::I8));
  EXPECT_FALSE(is_int(DType::Bool));
  EXPECT_FALSE(is_float(DType::Bool));
  EXPECT_EQ(to_dl(DType::Bool).code, kDLUInt); // DLPack 0.6 has no kDLBool
  EXPECT_EQ(to_dl(DType::BF16).code, kDLBfloat);
  EXPECT_EQ(parse_dtype("float32"), std::nullopt);
  EXPECT_EQ(from_dl(DLDataType{kDLUInt, 16, 1}), std::nullopt);
  EXPECT_EQ(from_dl(DLDataType{kDLFloat, 32, 4}), std::nullopt);
}

} // namespace
} // namespace dsc::ir
