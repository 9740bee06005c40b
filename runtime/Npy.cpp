#include "runtime/Npy.h"

#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "runtime/DTypeTable.h"
#include "support/Assert.h"
#include "support/File.h"

namespace dsc::runtime {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

// A dtype without a descr (bf16) cannot be stored as .npy.
const char* descr_of(DLDataType d) {
  for (const RuntimeDType& t : kRuntimeDTypes)
    if (t.npy && same_dtype(t.type, d)) return t.npy;
  return nullptr;
}

bool set_error(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// The header is a Python dict literal. Only the subset numpy writes is accepted: quoted
// strings without escapes, True/False, and tuples of non-negative ints.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  bool parse(std::string* error) {
    skip_space();
    if (!eat('{')) return fail(error, "expected '{' to open the header dict");
    bool have_descr = false, have_fortran = false, have_shape = false;
    for (;;) {
      skip_space();
      if (eat('}')) break;
      std::string key;
      if (!parse_string(&key, "a dict key", error)) return false;
      skip_space();
      if (!eat(':')) return fail(error, "expected ':' after key '" + key + "'");
      skip_space();
      bool* seen = nullptr;
      if (key == "descr") {
        seen = &have_descr;
        if (!parse_string(&descr, "the 'descr' value", error)) return false;
      } else if (key == "fortran_order") {
        seen = &have_fortran;
        if (!parse_bool(&fortran_order, error)) return false;
      } else if (key == "shape") {
        seen = &have_shape;
        if (!parse_shape(error)) return false;
      } else {
        return fail(error, "unexpected key '" + key +
                               "' (the header has exactly 'descr', 'fortran_order' and 'shape')");
      }
      if (*seen) return fail(error, "duplicate key '" + key + "'");
      *seen = true;
      skip_space();
      if (eat(',')) continue;
      if (eat('}')) break;
      return fail(error, "expected ',' or '}' after the value of '" + key + "'");
    }
    skip_space();
    if (i_ != s_.size()) return fail(error, "unexpected text after the header dict");
    const char* missing = !have_descr     ? "descr"
                          : !have_fortran ? "fortran_order"
                          : !have_shape   ? "shape"
                                          : nullptr;
    if (missing) return fail(error, std::string("header has no '") + missing + "' key");
    return true;
  }

  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;

private:
  bool fail(std::string* error, const std::string& message) {
    return set_error(error,
                     "malformed .npy header at offset " + std::to_string(i_) + ": " + message);
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  bool eat(char c) {
    if (at_end() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  void skip_space() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }

  bool parse_string(std::string* out, const char* what, std::string* error) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return fail(error, std::string("expected a quoted string for ") + what);
    size_t start = ++i_;
    while (!at_end() && s_[i_] != quote) {
      if (s_[i_] == '\\') return fail(error, "escape sequences in strings are not supported");
      if (s_[i_] == '\n') return fail(error, "unterminated string");
      ++i_;
    }
    if (at_end()) return fail(error, "unterminated string");
    *out = std::string(s_.substr(start, i_ - start));
    ++i_;
    return true;
  }

  bool parse_bool(bool* out, std::string* error) {
    if (s_.substr(i_, 4) == "True") {
      i_ += 4;
      *out = true;
      return true;
    }
    if (s_.substr(i_, 5) == "False") {
      i_ += 5;
      *out = false;
      return true;
    }
    return fail(error, "'fortran_order' must be True or False");
  }

  bool parse_dim(int64_t* out, std::string* error) {
    if (peek() == '-') return fail(error, "negative dimension in 'shape'");
    if (peek() < '0' || peek() > '9')
      return fail(error, "expected an integer dimension in 'shape'");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      int digit = peek() - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
        return fail(error, "dimension in 'shape' overflows int64");
      v = v * 10 + digit;
      ++i_;
    }
    *out = v;
    return true;
  }

  bool parse_shape(std::string* error) {
    if (!eat('(')) return fail(error, "'shape' must be a tuple of ints");
    skip_space();
    if (eat(')')) return true;
    for (;;) {
      int64_t d = 0;
      if (!parse_dim(&d, error)) return false;
      shape.push_back(d);
      skip_space();
      if (eat(')')) {
        // `(5)` is the int 5 in Python, not a tuple.
        if (shape.size() == 1) return fail(error, "'shape' (n) is not a tuple; write (n,)");
        return true;
      }
      if (!eat(',')) return fail(error, "expected ',' or ')' in 'shape'");
      skip_space();
      if (eat(')')) return true;
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

uint32_t read_le(std::string_view bytes, size_t offset, size_t width) {
  uint32_t v = 0;
  for (size_t k = 0; k < width; ++k)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + k])) << (8 * k);
  return v;
}

} // namespace

bool npy_supports(DLDataType dtype) {
  return descr_of(dtype) != nullptr;
}

std::optional<Tensor> read_npy_bytes(std::string_view bytes, std::string* error) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    set_error(error, "not a .npy file: missing the \\x93NUMPY magic");
    return std::nullopt;
  }
  if (bytes.size() < 8) {
    set_error(error, ".npy file truncated in the version bytes");
    return std::nullopt;
  }
  int major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    set_error(error, "unsupported .npy format version " + std::to_string(major) + "." +
                         std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
    return std::nullopt;
  }
  size_t len_width = major == 1 ? 2 : 4;
  size_t preamble = 8 + len_width;
  if (bytes.size() < preamble) {
    set_error(error, ".npy file truncated in the header length");
    return std::nullopt;
  }
  size_t header_len = read_le(bytes, 8, len_width);
  if (header_len > bytes.size() - preamble) {
    set_error(error, ".npy header truncated: header length is " + std::to_string(header_len) +
                         " bytes but only " + std::to_string(bytes.size() - preamble) +
                         " follow the preamble");
    return std::nullopt;
  }
  std::string_view header = bytes.substr(preamble, header_len);
  // v1 and v2 headers are latin-1 and v3 headers UTF-8; the keys and values accepted are ASCII
  // either way, so any other byte is an error, reported by the parser.
  HeaderParser parser(header);
  if (!parser.parse(error)) return std::nullopt;
  if (parser.fortran_order) {
    set_error(error, "Fortran-order .npy arrays are not supported (fortran_order is True)");
    return std::nullopt;
  }
  const std::string& descr = parser.descr;
  const RuntimeDType* found = nullptr;
  for (const RuntimeDType& e : kRuntimeDTypes) {
    if (!e.npy) continue;
    if (descr == e.npy) found = &e;
    // One-byte types have no byte order; accept '<' as well as numpy's '|'.
    if (descr.size() == 3 && descr[0] == '<' && e.npy[0] == '|' && descr.substr(1) == e.npy + 1)
      found = &e;
  }
  if (!found) {
    if (!descr.empty() && descr[0] == '>') {
      set_error(error, "big-endian .npy data ('" + descr + "') is not supported");
      return std::nullopt;
    }
    set_error(error, "unsupported .npy dtype '" + descr +
                         "' (supported: <f2 <f4 <f8 |i1 <i4 <i8 |b1; bfloat16 has no numpy "
                         "dtype)");
    return std::nullopt;
  }
  DLDataType dtype = found->type;
  size_t itemsize = dtype_bytes(dtype);
  // Bound the product of the nonzero dims, so that Tensor::numel (which multiplies left to
  // right) cannot overflow either, even when a later dim is 0.
  uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / itemsize;
  uint64_t nonzero = 1;
  bool empty = false;
  for (int64_t d : parser.shape) {
    if (d == 0) {
      empty = true;
      continue;
    }
    if (nonzero > limit / static_cast<uint64_t>(d)) {
      set_error(error, ".npy shape " + shape_string(parser.shape) + " of " + descr +
                           " overflows the addressable size");
      return std::nullopt;
    }
    nonzero *= static_cast<uint64_t>(d);
  }
  uint64_t expected = empty ? 0 : nonzero * itemsize;
  uint64_t found_bytes = bytes.size() - preamble - header_len;
  if (found_bytes < expected) {
    set_error(error, ".npy data truncated: shape " + shape_string(parser.shape) + " of " + descr +
                         " needs " + std::to_string(expected) + " bytes, found " +
                         std::to_string(found_bytes));
    return std::nullopt;
  }
  if (found_bytes > expected) {
    set_error(error, ".npy file has " + std::to_string(found_bytes - expected) +
                         " trailing bytes after the " + std::to_string(expected) +
                         " bytes of data");
    return std::nullopt;
  }
  const char* data = bytes.data() + preamble + header_len;
  if (same_dtype(dtype, dl_bool())) {
    for (uint64_t k = 0; k < expected; ++k) {
      auto b = static_cast<unsigned char>(data[k]);
      if (b > 1) {
        set_error(error, ".npy bool element " + std::to_string(k) + " is byte " +
                             std::to_string(b) + ", not 0 or 1");
        return std::nullopt;
      }
    }
  }
  Tensor t = Tensor::zeros(dtype, parser.shape);
  if (expected) std::memcpy(t.data(), data, expected);
  return t;
}

std::optional<Tensor> read_npy(const std::string& path, std::string* error) {
  std::string reason; // the file's problem reads the same whatever the system's reason
  std::optional<std::string> bytes = read_file(path, &reason);
  if (!bytes) {
    set_error(error, path + ": cannot open for reading");
    return std::nullopt;
  }
  std::string message;
  std::optional<Tensor> t = read_npy_bytes(*bytes, &message);
  if (!t) set_error(error, path + ": " + message);
  return t;
}

std::string npy_bytes(const Tensor& t) {
  internal_assert(t.defined()) << "npy_bytes of an undefined tensor";
  const char* descr = descr_of(t.dtype());
  internal_assert(descr) << "npy_bytes: no .npy dtype for " << dtype_name(t.dtype());
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape_string(t.shape()) + ", }";
  // numpy pads with spaces so that preamble + header + '\n' is a multiple of 64.
  // Like numpy, a header that is already aligned still gets 64 spaces.
  auto padding = [&](size_t preamble) { return 64 - (preamble + header.size() + 1) % 64; };
  size_t preamble = 10;
  if (header.size() + padding(preamble) + 1 > 0xffff) preamble = 12;
  header.append(padding(preamble), ' ');
  header += '\n';
  std::string out(kMagic);
  out += static_cast<char>(preamble == 10 ? 1 : 2);
  out += '\0';
  size_t n = header.size();
  for (size_t k = 0; k < preamble - 8; ++k)
    out += static_cast<char>((n >> (8 * k)) & 0xff);
  out += header;
  out.append(static_cast<const char*>(t.data()), t.nbytes());
  return out;
}

bool write_npy(const std::string& path, const Tensor& t, std::string* error) {
  if (!t.defined()) return set_error(error, path + ": cannot write an undefined tensor");
  if (!npy_supports(t.dtype()))
    return set_error(error, path + ": cannot write " + dtype_name(t.dtype()) +
                                " as .npy (numpy has no such dtype)");
  std::string bytes = npy_bytes(t);
  std::string reason;
  if (!write_file(path, bytes, &reason))
    return set_error(error, path + ": cannot open for writing");
  return true;
}

} // namespace dsc::runtime
