// The dtype table (ir/DTypes.def) as the runtime sees it, without the compiler: every dtype's
// name round-trips through runtime::dtype_name and parse_dtype_name, its size is its bits, and
// the .npy writer takes exactly the dtypes that have a descr.
#include <gtest/gtest.h>

#include <string>

#include "runtime/DTypeTable.h"
#include "runtime/Npy.h"
#include "runtime/Tensor.h"

namespace dsc::runtime {
namespace {

TEST(DTypeTableTest, RuntimeNamesRoundTrip) {
  for (const RuntimeDType& row : kRuntimeDTypes) {
    EXPECT_EQ(dtype_name(row.type), row.name);
    DLDataType parsed{};
    ASSERT_TRUE(parse_dtype_name(row.name, &parsed)) << row.name;
    EXPECT_TRUE(same_dtype(parsed, row.type)) << row.name;
    EXPECT_EQ(dtype_bytes(row.type) * 8, row.type.bits) << row.name;
    EXPECT_EQ(npy_supports(row.type), row.npy != nullptr) << row.name;
  }
  DLDataType unused{};
  EXPECT_FALSE(parse_dtype_name("u8", &unused));
  EXPECT_EQ(dtype_name(DLDataType{kDLUInt, 16, 1}), "?");
}

// The helpers that tests and the file readers use name the same types as the table.
TEST(DTypeTableTest, Helpers) {
  EXPECT_EQ(dtype_name(dl_bool()), "bool");
  EXPECT_EQ(dtype_name(dl_int(32)), "i32");
  EXPECT_EQ(dtype_name(dl_float(16)), "f16");
  EXPECT_EQ(dtype_name(dl_bfloat16()), "bf16");
}

} // namespace
} // namespace dsc::runtime
