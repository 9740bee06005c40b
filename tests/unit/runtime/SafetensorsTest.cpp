#include "runtime/Safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "tests/unit/runtime/RandomBytes.h"

namespace dsc::runtime {
namespace {

using ::testing::HasSubstr;
using testing::mutate;
using testing::random_tensor;

std::vector<DLDataType> all_dtypes() {
  return {dl_float(16), dl_bfloat16(), dl_float(32), dl_float(64),
          dl_int(8),    dl_int(32),    dl_int(64),   dl_bool()};
}

void expect_same(const TensorMap& a, const TensorMap& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    ASSERT_NE(it, b.end()) << name;
    const Tensor& u = it->second;
    EXPECT_EQ(t.type_string(), u.type_string()) << name;
    ASSERT_EQ(t.nbytes(), u.nbytes());
    EXPECT_EQ(0, std::memcmp(t.data(), u.data(), t.nbytes())) << name;
  }
}

// A file with the given header text and data.
std::string make_st(const std::string& header, const std::string& data = "") {
  std::string out;
  for (size_t k = 0; k < 8; ++k)
    out += static_cast<char>((uint64_t{header.size()} >> (8 * k)) & 0xff);
  return out + header + data;
}

std::string error_of(std::string_view bytes) {
  std::string error;
  std::optional<TensorMap> m = read_safetensors_bytes(bytes, &error);
  EXPECT_FALSE(m.has_value());
  EXPECT_FALSE(error.empty());
  return error;
}

TEST(Safetensors, RoundTripEveryDtypeAndAwkwardShape) {
  std::mt19937 rng(3);
  std::vector<std::vector<int64_t>> shapes = {{}, {0}, {1}, {7, 13}, {2, 3, 1, 5, 2}};
  TensorMap tensors;
  for (DLDataType dtype : all_dtypes())
    for (size_t s = 0; s < shapes.size(); ++s)
      tensors[dtype_name(dtype) + "." + std::to_string(s)] = random_tensor(dtype, shapes[s], rng);
  std::string error;
  std::optional<std::string> bytes = safetensors_bytes(tensors, &error);
  ASSERT_TRUE(bytes) << error;
  std::optional<TensorMap> back = read_safetensors_bytes(*bytes, &error);
  ASSERT_TRUE(back) << error;
  expect_same(tensors, *back);
}

TEST(Safetensors, EmptyMap) {
  std::string error;
  std::optional<std::string> bytes = safetensors_bytes({}, &error);
  ASSERT_TRUE(bytes) << error;
  EXPECT_EQ(*bytes, make_st("{}      "));
  std::optional<TensorMap> back = read_safetensors_bytes(*bytes, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_TRUE(back->empty());
}

TEST(Safetensors, GoldenBytes) {
  TensorMap tensors;
  tensors["w"] = Tensor::zeros(dl_float(32), {1});
  tensors["w"].data_as<float>()[0] = 1.0f;
  tensors["b"] = Tensor::zeros(dl_int(8), {2});
  tensors["b"].data_as<int8_t>()[1] = -1;
  std::string header = R"({"b":{"data_offsets":[0,2],"dtype":"I8","shape":[2]},)"
                       R"("w":{"data_offsets":[2,6],"dtype":"F32","shape":[1]}})";
  ASSERT_EQ(header.size(), 106u);
  header += "      "; // padded to 112, a multiple of 8
  std::string expected = make_st(header, std::string("\x00\xff\x00\x00\x80\x3f", 6));
  std::string error;
  std::optional<std::string> bytes = safetensors_bytes(tensors, &error);
  ASSERT_TRUE(bytes) << error;
  EXPECT_EQ(*bytes, expected);
}

TEST(Safetensors, MetadataIgnoredAndOffsetsInAnyOrder) {
  std::string header = R"({"__metadata__":{"format":"pt"},)"
                       R"("late":{"dtype":"I32","shape":[1],"data_offsets":[2,6]},)"
                       R"("early":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})";
  std::string error;
  std::optional<TensorMap> m =
      read_safetensors_bytes(make_st(header, std::string("\x01\x00\x07\x00\x00\x00", 6)), &error);
  ASSERT_TRUE(m) << error;
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ(m->at("late").type_string(), "i32[1]");
  EXPECT_EQ(m->at("late").data_as<int32_t>()[0], 7);
  EXPECT_EQ(m->at("early").type_string(), "bool[2]");
}

TEST(Safetensors, FileRoundTrip) {
  std::mt19937 rng(5);
  TensorMap tensors;
  tensors["x"] = random_tensor(dl_bfloat16(), {4, 3}, rng);
  std::string path = ::testing::TempDir() + "/st_test.safetensors";
  std::string error;
  ASSERT_TRUE(write_safetensors(path, tensors, &error)) << error;
  std::optional<TensorMap> back = read_safetensors(path, &error);
  ASSERT_TRUE(back) << error;
  expect_same(tensors, *back);
  EXPECT_FALSE(read_safetensors(path + ".missing", &error));
  EXPECT_EQ(error, path + ".missing: cannot open for reading");
}

TEST(Safetensors, WriteRefusals) {
  std::string error;
  TensorMap reserved;
  reserved["__metadata__"] = Tensor::zeros(dl_float(32), {1});
  EXPECT_FALSE(safetensors_bytes(reserved, &error));
  EXPECT_EQ(error, "'__metadata__' is reserved and cannot name a tensor");
  TensorMap undefined;
  undefined["u"] = Tensor();
  EXPECT_FALSE(safetensors_bytes(undefined, &error));
  EXPECT_EQ(error, "tensor 'u' is undefined");
  TensorMap bad_name;
  bad_name["\xff"] = Tensor::zeros(dl_float(32), {1});
  EXPECT_FALSE(write_safetensors(::testing::TempDir() + "/bad.safetensors", bad_name, &error));
  EXPECT_THAT(error, HasSubstr("cannot write safetensors header"));
}

TEST(SafetensorsCorrupt, TooShort) {
  EXPECT_EQ(error_of("abc"),
            "safetensors file truncated: 3 bytes, fewer than the 8-byte header length");
}

TEST(SafetensorsCorrupt, HeaderLengthPastFile) {
  std::string bytes = make_st("{}");
  bytes[0] = 100;
  EXPECT_EQ(error_of(bytes),
            "safetensors header length 100 runs past the end of the file (2 bytes follow)");
  std::string huge(8, '\xff');
  EXPECT_THAT(error_of(huge + "{}"), HasSubstr("runs past the end of the file"));
}

TEST(SafetensorsCorrupt, InvalidJson) {
  EXPECT_THAT(error_of(make_st(R"({"a":)")), HasSubstr("safetensors header is not valid JSON: "));
  EXPECT_THAT(error_of(make_st("")), HasSubstr("safetensors header is not valid JSON: "));
  EXPECT_THAT(error_of(make_st("{\"\xff\":1}")),
              HasSubstr("safetensors header is not valid JSON: "));
}

TEST(SafetensorsCorrupt, NotAnObject) {
  EXPECT_EQ(error_of(make_st("[1, 2]")), "safetensors header is not a JSON object");
  EXPECT_EQ(error_of(make_st(R"({"a": 3})")), "tensor 'a': entry is not a JSON object");
}

TEST(SafetensorsCorrupt, MissingOrExtraKeys) {
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"F32","shape":[]}})")),
            "tensor 'a': entry needs 'dtype', 'shape' and 'data_offsets'");
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,4],"x":1}})")),
            "tensor 'a': unexpected key 'x'");
}

TEST(SafetensorsCorrupt, UnknownDtype) {
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "x")),
            "tensor 'a': unsupported dtype 'U8' (supported: BOOL I8 I32 I64 F16 BF16 F32 F64)");
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":4,"shape":[1],"data_offsets":[0,1]}})", "x")),
            "tensor 'a': 'dtype' is not a string");
}

TEST(SafetensorsCorrupt, BadShape) {
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"I8","shape":[-1],"data_offsets":[0,0]}})")),
            "tensor 'a': shape dims must be non-negative integers that fit int64, got a number");
  EXPECT_THAT(error_of(make_st(R"({"a":{"dtype":"I8","shape":[1.5],"data_offsets":[0,0]}})")),
              HasSubstr("shape dims must be non-negative integers"));
  EXPECT_THAT(error_of(make_st(
                  R"({"a":{"dtype":"I8","shape":[9223372036854775808],"data_offsets":[0,0]}})")),
              HasSubstr("shape dims must be non-negative integers"));
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"I8","shape":3,"data_offsets":[0,0]}})")),
            "tensor 'a': 'shape' is not an array");
  EXPECT_EQ(error_of(make_st(
                R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}})")),
            "tensor 'a': shape overflows the addressable size");
}

TEST(SafetensorsCorrupt, OffsetsMalformed) {
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"I8","shape":[1],"data_offsets":[0]}})", "x")),
            "tensor 'a': 'data_offsets' must be [begin, end] of non-negative ints");
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"I8","shape":[0],"data_offsets":[1,0]}})", "x")),
            "tensor 'a': data_offsets [1, 0] end before they begin");
}

TEST(SafetensorsCorrupt, OffsetsOutOfRange) {
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})", "abcd")),
            "tensor 'a': data_offsets end 8 is past the 4-byte data buffer");
  EXPECT_EQ(
      error_of(make_st(
          R"({"a":{"dtype":"I8","shape":[0],"data_offsets":[18446744073709551615,18446744073709551615]}})")),
      "tensor 'a': 'data_offsets' must be [begin, end] of non-negative ints");
}

TEST(SafetensorsCorrupt, OffsetsDoNotMatchShape) {
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"F32","shape":[2, 3],"data_offsets":[0,20]}})",
                             std::string(20, '\0'))),
            "tensor 'a': data_offsets [0, 20] span 20 bytes but F32 shape needs 24");
}

TEST(SafetensorsCorrupt, Overlap) {
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"I8","shape":[4],"data_offsets":[0,4]},)"
                             R"("b":{"dtype":"I8","shape":[4],"data_offsets":[2,6]}})",
                             "abcdef")),
            "tensors 'a' and 'b' overlap in the data buffer");
}

TEST(SafetensorsCorrupt, HoleAndUnusedBytes) {
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"I8","shape":[2],"data_offsets":[2,4]}})", "abcd")),
            "safetensors data buffer has a hole at bytes [0, 2)");
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}})", "abcd")),
            "safetensors data buffer has 2 bytes not used by any tensor");
}

TEST(SafetensorsCorrupt, DuplicateNames) {
  EXPECT_EQ(error_of(make_st(R"({"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1]},)"
                             R"("a":{"dtype":"I8","shape":[1],"data_offsets":[1,2]}})",
                             "ab")),
            "safetensors header has duplicate tensor name 'a'");
}

TEST(SafetensorsCorrupt, BoolByteNotZeroOrOne) {
  EXPECT_EQ(
      error_of(make_st(R"({"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", "\x01\x05")),
      "tensor 'a': bool element 1 is byte 5, not 0 or 1");
}

// Random flips, truncations and JSON-token splices of valid files: each must be read or
// refused, never crash. Run under ASan (DSC_SANITIZE=ON) to catch over-reads.
TEST(SafetensorsFuzz, RandomMutationsNeverCrash) {
  std::mt19937 rng(777);
  std::vector<std::string> seeds;
  for (DLDataType dtype : all_dtypes()) {
    TensorMap m;
    m["t"] = random_tensor(dtype, {2, 3}, rng);
    m["s"] = random_tensor(dtype, {}, rng);
    m["e"] = random_tensor(dtype, {0}, rng);
    std::string error;
    seeds.push_back(*safetensors_bytes(m, &error));
  }
  const char* tokens[] = {"[",
                          "]",
                          "{",
                          "}",
                          ",",
                          ":",
                          "\"",
                          "-1",
                          "0",
                          "1.5",
                          "null",
                          "18446744073709551616",
                          "\"__metadata__\"",
                          "\"BF16\"",
                          "\\",
                          " "};
  int accepted = 0;
  for (int iter = 0; iter < 30000; ++iter) {
    std::string bytes = seeds[rng() % seeds.size()];
    mutate(bytes, rng, [&](std::string& data) {
      // Splice into the JSON and keep the length field right, so the parser sees it.
      std::string tok = tokens[rng() % std::size(tokens)];
      uint64_t len = 0;
      for (size_t k = 0; k < 8 && k < data.size(); ++k)
        len |= uint64_t{static_cast<unsigned char>(data[k])} << (8 * k);
      if (data.size() < 8 || len > data.size() - 8) return;
      data.insert(8 + rng() % (len + 1), tok);
      len += tok.size();
      for (size_t k = 0; k < 8; ++k)
        data[k] = static_cast<char>((len >> (8 * k)) & 0xff);
    });
    std::string error;
    std::optional<TensorMap> m = read_safetensors_bytes(bytes, &error);
    if (m) {
      ++accepted;
      for (const auto& [name, t] : *m)
        ASSERT_LE(t.nbytes(), bytes.size()) << name;
    } else {
      ASSERT_FALSE(error.empty());
    }
  }
  EXPECT_GT(accepted, 0);
}

} // namespace
} // namespace dsc::runtime
