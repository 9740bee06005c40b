#include "runtime/Npy.h"

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

std::vector<DLDataType> npy_dtypes() {
  return {dl_float(16), dl_float(32), dl_float(64), dl_int(8), dl_int(32), dl_int(64), dl_bool()};
}

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_TRUE(a.defined() && b.defined());
  EXPECT_TRUE(same_dtype(a.dtype(), b.dtype()))
      << dtype_name(a.dtype()) << " vs " << dtype_name(b.dtype());
  EXPECT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.nbytes()));
}

// A .npy file with the given header text, not padded, and the given version.
std::string make_npy(const std::string& header, const std::string& data = "", int major = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  size_t width = major == 1 ? 2 : 4;
  for (size_t k = 0; k < width; ++k)
    out += static_cast<char>((header.size() >> (8 * k)) & 0xff);
  return out + header + data;
}

std::string header_for(const std::string& descr, const std::string& shape,
                       const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

std::string error_of(std::string_view bytes) {
  std::string error;
  std::optional<Tensor> t = read_npy_bytes(bytes, &error);
  EXPECT_FALSE(t.has_value());
  EXPECT_FALSE(error.empty());
  return error;
}

TEST(Npy, RoundTripEveryDtypeAndAwkwardShape) {
  std::mt19937 rng(1);
  std::vector<std::vector<int64_t>> shapes = {{}, {0}, {1}, {7, 13}, {2, 3, 1, 5, 2}, {3, 0, 4}};
  for (DLDataType dtype : npy_dtypes()) {
    for (const auto& shape : shapes) {
      Tensor t = random_tensor(dtype, shape, rng);
      std::string bytes = npy_bytes(t);
      // numpy aligns the data to 64 bytes.
      EXPECT_EQ((bytes.size() - t.nbytes()) % 64, 0u) << t.type_string();
      std::string error;
      std::optional<Tensor> back = read_npy_bytes(bytes, &error);
      ASSERT_TRUE(back) << t.type_string() << ": " << error;
      expect_same(t, *back);
    }
  }
}

TEST(Npy, GoldenFloat32Matrix) {
  Tensor t = Tensor::zeros(dl_float(32), {2, 3});
  for (int k = 0; k < 6; ++k)
    t.data_as<float>()[k] = static_cast<float>(k);
  // As numpy 1.x writes np.arange(6, dtype='<f4').reshape(2, 3): 59 header chars, 58 spaces
  // and '\n' make 118 (0x76) header bytes, 128 with the preamble.
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
                         std::string(58, ' ') + "\n" +
                         std::string("\x00\x00\x00\x00"
                                     "\x00\x00\x80\x3f"
                                     "\x00\x00\x00\x40"
                                     "\x00\x00\x40\x40"
                                     "\x00\x00\x80\x40"
                                     "\x00\x00\xa0\x40",
                                     24);
  EXPECT_EQ(npy_bytes(t), expected);
  std::string error;
  std::optional<Tensor> back = read_npy_bytes(expected, &error);
  ASSERT_TRUE(back) << error;
  expect_same(t, *back);
}

TEST(Npy, GoldenScalarAndVector) {
  Tensor s = Tensor::zeros(dl_int(64), {});
  s.data_as<int64_t>()[0] = -2;
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                         "{'descr': '<i8', 'fortran_order': False, 'shape': (), }" +
                         std::string(62, ' ') + "\n" +
                         std::string("\xfe\xff\xff\xff\xff\xff\xff\xff", 8);
  EXPECT_EQ(npy_bytes(s), expected);

  Tensor v = Tensor::zeros(dl_bool(), {3});
  v.data_as<uint8_t>()[1] = 1;
  std::string bytes = npy_bytes(v);
  EXPECT_THAT(bytes, HasSubstr("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"));
  EXPECT_EQ(bytes.substr(bytes.size() - 4), std::string("\n\x00\x01\x00", 4));
}

TEST(Npy, AlignedHeaderGetsAFullPad) {
  // numpy computes the pad as 64 - (10 + len + 1) % 64, so a header that would already end
  // on a 64-byte boundary gets 64 spaces, not 0. Shape (10, 1, ..., 1) of rank 21 makes a
  // 117-char dict.
  std::vector<int64_t> shape(21, 1);
  shape[0] = 10;
  Tensor t = Tensor::zeros(dl_int(8), shape);
  std::string h = "{'descr': '|i1', 'fortran_order': False, 'shape': (10";
  for (int k = 1; k < 21; ++k)
    h += ", 1";
  h += "), }";
  ASSERT_EQ(h.size(), 117u);
  std::string expected = std::string("\x93NUMPY\x01\x00\xb6\x00", 10) + h + std::string(64, ' ') +
                         "\n" + std::string(10, '\0');
  EXPECT_EQ(npy_bytes(t), expected);
  std::string error;
  ASSERT_TRUE(read_npy_bytes(expected, &error)) << error;
}

TEST(Npy, ReadsOtherVersionsAndSpellings) {
  std::string data(8, '\0');
  data[0] = 1;
  for (int major : {1, 2, 3}) {
    std::string error;
    auto t = read_npy_bytes(make_npy(header_for("<i4", "(2,)"), data, major), &error);
    ASSERT_TRUE(t) << major << ": " << error;
    EXPECT_EQ(t->type_string(), "i32[2]");
    EXPECT_EQ(t->data_as<int32_t>()[0], 1);
  }
  std::string error;
  // Keys in any order, double quotes, no trailing comma, no padding newline.
  auto t = read_npy_bytes(make_npy("{\"shape\":(1,2,1),\"fortran_order\":False,\"descr\":\"<f8\"}",
                                   std::string(16, 'x')),
                          &error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->type_string(), "f64[1, 2, 1]");
  // One-byte types may carry '<' instead of '|'.
  t = read_npy_bytes(make_npy(header_for("<i1", "(3,)"), "abc"), &error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->type_string(), "i8[3]");
}

TEST(Npy, FileRoundTrip) {
  std::mt19937 rng(7);
  Tensor t = random_tensor(dl_float(16), {5, 3}, rng);
  std::string path = ::testing::TempDir() + "/npy_test.npy";
  std::string error;
  ASSERT_TRUE(write_npy(path, t, &error)) << error;
  std::optional<Tensor> back = read_npy(path, &error);
  ASSERT_TRUE(back) << error;
  expect_same(t, *back);
  EXPECT_FALSE(read_npy(path + ".missing", &error));
  EXPECT_EQ(error, path + ".missing: cannot open for reading");
}

TEST(Npy, RefusesToWriteBfloat16) {
  std::string error;
  EXPECT_FALSE(npy_supports(dl_bfloat16()));
  EXPECT_FALSE(
      write_npy(::testing::TempDir() + "/bf16.npy", Tensor::zeros(dl_bfloat16(), {2}), &error));
  EXPECT_THAT(error, HasSubstr("cannot write bf16 as .npy (numpy has no such dtype)"));
}

TEST(NpyCorrupt, BadMagic) {
  EXPECT_EQ(error_of("\x93NUMPZ\x01\x00"), "not a .npy file: missing the \\x93NUMPY magic");
  EXPECT_EQ(error_of(""), "not a .npy file: missing the \\x93NUMPY magic");
}

TEST(NpyCorrupt, TruncatedPreamble) {
  EXPECT_EQ(error_of("\x93NUMPY\x01"), ".npy file truncated in the version bytes");
  EXPECT_EQ(error_of(std::string("\x93NUMPY\x01\x00\x05", 9)),
            ".npy file truncated in the header length");
  EXPECT_EQ(error_of(std::string("\x93NUMPY\x02\x00\x05\x00\x00", 11)),
            ".npy file truncated in the header length");
}

TEST(NpyCorrupt, UnsupportedVersion) {
  std::string v4 = make_npy(header_for("<f4", "()"), "abcd");
  v4[6] = 4;
  EXPECT_EQ(error_of(v4), "unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)");
  v4[6] = 1;
  v4[7] = 1;
  EXPECT_EQ(error_of(v4), "unsupported .npy format version 1.1 (supported: 1.0, 2.0, 3.0)");
}

TEST(NpyCorrupt, TruncatedHeader) {
  std::string bytes = make_npy(header_for("<f4", "()"));
  EXPECT_EQ(error_of(bytes.substr(0, 30)),
            ".npy header truncated: header length is 56 bytes but only 20 follow the preamble");
}

TEST(NpyCorrupt, HeaderNotADict) {
  EXPECT_EQ(error_of(make_npy("['descr', '<f4']\n")),
            "malformed .npy header at offset 0: expected '{' to open the header dict");
}

TEST(NpyCorrupt, MissingKey) {
  EXPECT_EQ(error_of(make_npy("{'descr': '<f4', 'fortran_order': False}")),
            "malformed .npy header at offset 40: header has no 'shape' key");
}

TEST(NpyCorrupt, ExtraKey) {
  EXPECT_THAT(error_of(make_npy("{'descr': '<f4', 'extra': 1}")),
              HasSubstr("unexpected key 'extra' (the header has exactly 'descr', "
                        "'fortran_order' and 'shape')"));
}

TEST(NpyCorrupt, DuplicateKey) {
  EXPECT_THAT(error_of(make_npy("{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, "
                                "'shape': ()}")),
              HasSubstr("duplicate key 'descr'"));
}

TEST(NpyCorrupt, FortranOrder) {
  EXPECT_EQ(error_of(make_npy(header_for("<f4", "(2, 2)", "True"), std::string(16, '\0'))),
            "Fortran-order .npy arrays are not supported (fortran_order is True)");
  EXPECT_THAT(error_of(make_npy(header_for("<f4", "(2, 2)", "'no'"))),
              HasSubstr("'fortran_order' must be True or False"));
}

TEST(NpyCorrupt, UnknownDtype) {
  EXPECT_EQ(error_of(make_npy(header_for("<u4", "(1,)"), "abcd")),
            "unsupported .npy dtype '<u4' (supported: <f2 <f4 <f8 |i1 <i4 <i8 |b1; bfloat16 has "
            "no numpy dtype)");
  EXPECT_THAT(error_of(make_npy(header_for("|O", "(1,)"))),
              HasSubstr("unsupported .npy dtype '|O'"));
  EXPECT_THAT(error_of(make_npy(header_for("|f4", "(1,)"))),
              HasSubstr("unsupported .npy dtype '|f4'"));
}

TEST(NpyCorrupt, BigEndian) {
  EXPECT_EQ(error_of(make_npy(header_for(">f4", "(1,)"), "abcd")),
            "big-endian .npy data ('>f4') is not supported");
}

TEST(NpyCorrupt, NegativeDim) {
  EXPECT_EQ(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }")),
            "malformed .npy header at offset 54: negative dimension in 'shape'");
}

TEST(NpyCorrupt, OverflowingDim) {
  EXPECT_THAT(error_of(make_npy(header_for("<f4", "(99999999999999999999,)"))),
              HasSubstr("dimension in 'shape' overflows int64"));
}

TEST(NpyCorrupt, OverflowingSize) {
  EXPECT_EQ(error_of(make_npy(header_for("<f8", "(1099511627776, 1099511627776)"))),
            ".npy shape (1099511627776, 1099511627776) of <f8 overflows the addressable size");
  // Even with a zero dim later, which would make numel 0, the prefix product overflows.
  EXPECT_THAT(error_of(make_npy(header_for("<f4", "(4611686018427387904, 4, 0)"))),
              HasSubstr("overflows the addressable size"));
}

TEST(NpyCorrupt, DataTooShort) {
  EXPECT_EQ(error_of(make_npy(header_for("<f4", "(2, 3)"), std::string(20, '\0'))),
            ".npy data truncated: shape (2, 3) of <f4 needs 24 bytes, found 20");
  EXPECT_EQ(
      error_of(make_npy(header_for("<i8", "(1099511627776,)"))),
      ".npy data truncated: shape (1099511627776,) of <i8 needs 8796093022208 bytes, found 0");
}

TEST(NpyCorrupt, TrailingGarbage) {
  EXPECT_EQ(error_of(make_npy(header_for("|i1", "(2,)"), "abc")),
            ".npy file has 1 trailing bytes after the 2 bytes of data");
}

TEST(NpyCorrupt, ShapeNotATuple) {
  EXPECT_THAT(error_of(make_npy(header_for("<f4", "(5)"))),
              HasSubstr("'shape' (n) is not a tuple; write (n,)"));
  EXPECT_THAT(error_of(make_npy(header_for("<f4", "[5]"))),
              HasSubstr("'shape' must be a tuple of ints"));
  EXPECT_THAT(error_of(make_npy(header_for("<f4", "(5,,)"))),
              HasSubstr("expected an integer dimension in 'shape'"));
  EXPECT_THAT(error_of(make_npy(header_for("<f4", "(5 6)"))),
              HasSubstr("expected ',' or ')' in 'shape'"));
}

TEST(NpyCorrupt, BadStrings) {
  EXPECT_THAT(error_of(make_npy("{'descr: '<f4'}")), HasSubstr("expected ':' after key 'descr: '"));
  EXPECT_THAT(error_of(make_npy("{'descr")), HasSubstr("unterminated string"));
  EXPECT_THAT(error_of(make_npy("{'de\\x63r': '<f4'}")),
              HasSubstr("escape sequences in strings are not supported"));
  EXPECT_THAT(error_of(make_npy("{descr: '<f4'}")),
              HasSubstr("expected a quoted string for a dict key"));
}

TEST(NpyCorrupt, TextAfterDict) {
  EXPECT_EQ(error_of(make_npy(header_for("<f4", "()") + "x", "abcd")),
            "malformed .npy header at offset 56: unexpected text after the header dict");
  EXPECT_THAT(error_of(make_npy("{'descr': '<f4' 'shape': ()}")),
              HasSubstr("expected ',' or '}' after the value of 'descr'"));
}

TEST(NpyCorrupt, BoolByteNotZeroOrOne) {
  EXPECT_EQ(error_of(make_npy(header_for("|b1", "(3,)"), std::string("\x01\x00\x02", 3))),
            ".npy bool element 2 is byte 2, not 0 or 1");
}

// Random flips, byte sets, truncations and header-token splices of valid files: each must
// be read or refused, never crash, and a result must be self-consistent. Run under ASan
// (DSC_SANITIZE=ON) to catch over-reads.
TEST(NpyFuzz, RandomMutationsNeverCrash) {
  std::mt19937 rng(12345);
  std::vector<std::string> seeds;
  for (DLDataType dtype : npy_dtypes()) {
    seeds.push_back(npy_bytes(random_tensor(dtype, {3, 2}, rng)));
    seeds.push_back(npy_bytes(random_tensor(dtype, {}, rng)));
  }
  seeds.push_back(make_npy(header_for("<f4", "(2,)"), std::string(8, '\0'), 3));
  const char* tokens[] = {"(",   ")",   ",",   "'", "\"", "True", "False",
                          "{",   "}",   ":",   "-", "9",  "0",    "99999999999999999999",
                          "<f8", ">i4", "|b1", " ", "\n", "\\"};
  int accepted = 0;
  for (int iter = 0; iter < 50000; ++iter) {
    std::string bytes = seeds[rng() % seeds.size()];
    mutate(bytes, rng, [&](std::string& data) {
      // Splices land mostly in the header, where the parser is.
      size_t at = 10 + rng() % 64;
      if (at > data.size()) at = data.size();
      data.insert(at, tokens[rng() % std::size(tokens)]);
    });
    std::string error;
    std::optional<Tensor> t = read_npy_bytes(bytes, &error);
    if (t) {
      ++accepted;
      ASSERT_LE(t->nbytes(), bytes.size());
    } else {
      ASSERT_FALSE(error.empty());
    }
  }
  // Some mutations (in data bytes or padding) leave a valid file.
  EXPECT_GT(accepted, 0);
}

} // namespace
} // namespace dsc::runtime
