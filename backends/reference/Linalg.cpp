// matmul (NumPy semantics: batched with broadcast batch dims, 1-D operands promoted and the
// added dim removed), matmul_q (weights quantized per group, dequantized as they are read)
// and conv2d (NCHW input, OIHW weights). Accumulation is in double for floats and int64 for
// integers.

#include "backends/reference/Value.h"
#include "ir/OpRegistry.h"

namespace dsc::reference {

using ir::DType;

namespace {

Result matmul(const Value& a, const Value& b, OpError& err) {
  if (!a.is_tensor() || !b.is_tensor() || a.shape().empty() || b.shape().empty()) {
    err.message = "matmul expects tensors of rank >= 1";
    return std::nullopt;
  }
  if (a.dtype != b.dtype || a.dtype == DType::Bool) {
    err.message = "matmul: operands must share a numeric dtype, got " +
                  type_string(a.dtype, a.shape()) + " and " + type_string(b.dtype, b.shape());
    return std::nullopt;
  }
  std::vector<int64_t> sa = a.shape(), sb = b.shape();
  bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  int64_t m = sa[sa.size() - 2], k = sa.back(), k2 = sb[sb.size() - 2], n = sb.back();
  if (k != k2) {
    err.message = "matmul: contracted dims differ: " + type_string(a.dtype, a.shape()) + " and " +
                  type_string(b.dtype, b.shape()) + " (" + std::to_string(k) + " vs " +
                  std::to_string(k2) + ")";
    return std::nullopt;
  }
  std::vector<int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  size_t br = std::max(ba.size(), bb.size());
  ba.insert(ba.begin(), br - ba.size(), 1);
  bb.insert(bb.begin(), br - bb.size(), 1);
  std::vector<int64_t> batch(br);
  for (size_t i = 0; i < br; ++i) {
    if (ba[i] != bb[i] && ba[i] != 1 && bb[i] != 1) {
      err.message = "matmul: batch dims of " + type_string(a.dtype, a.shape()) + " and " +
                    type_string(b.dtype, b.shape()) + " do not broadcast";
      return std::nullopt;
    }
    batch[i] = ba[i] == 1 ? bb[i] : ba[i];
  }
  std::vector<int64_t> out_shape = batch;
  if (!a_vec) out_shape.push_back(m);
  if (!b_vec) out_shape.push_back(n);
  Value out = make_tensor(a.dtype, out_shape);
  std::vector<int64_t> sta = strides_of(ba), stb = strides_of(bb);
  int64_t nbatch = product(batch);
  bool is_f = ir::is_float(a.dtype);
  std::vector<int64_t> idx(br, 0);
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < br; ++d) {
      oa += (ba[d] == 1 ? 0 : idx[d]) * sta[d];
      ob += (bb[d] == 1 ? 0 : idx[d]) * stb[d];
    }
    int64_t base_a = oa * m * k, base_b = ob * k * n, base_o = bi * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        if (is_f) {
          double acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc += load_f(a, base_a + i * k + p) * load_f(b, base_b + p * n + j);
          store_f(out, base_o + i * n + j, acc);
        } else {
          uint64_t acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc += static_cast<uint64_t>(load_i(a, base_a + i * k + p)) *
                   static_cast<uint64_t>(load_i(b, base_b + p * n + j));
          store_i(out, base_o + i * n + j, static_cast<int64_t>(acc));
        }
      }
    for (size_t d = br; d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

Result conv2d(const std::vector<Value>& args, OpError& err) {
  const Value& x = args[0];
  const Value& w = args[1];
  if (!x.is_tensor() || !w.is_tensor() || x.shape().size() != 4 || w.shape().size() != 4) {
    err.message = "conv2d expects a rank-4 input and rank-4 weights";
    return std::nullopt;
  }
  if (x.dtype != w.dtype) {
    err.message = "conv2d: input and weights have different dtypes";
    return std::nullopt;
  }
  auto stride = as_int_pair(args[2]), padding = as_int_pair(args[3]),
       dilation = as_int_pair(args[4]);
  std::optional<int64_t> groups = as_int(args[5]);
  if (!stride || !padding || !dilation || !groups) {
    err.message = "conv2d: stride, padding and dilation must be ints or pairs, groups an int";
    return std::nullopt;
  }
  int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  int64_t O = w.shape()[0], I = w.shape()[1], KH = w.shape()[2], KW = w.shape()[3];
  int64_t G = *groups;
  auto [sh, sw] = *stride;
  auto [ph, pw] = *padding;
  auto [dh, dw] = *dilation;
  if (G < 1 || C != G * I || O % G != 0 || sh < 1 || sw < 1 || dh < 1 || dw < 1 || ph < 0 ||
      pw < 0) {
    err.message = "conv2d: invalid configuration: input " + type_string(x.dtype, x.shape()) +
                  ", weights " + type_string(w.dtype, w.shape()) + ", groups " + std::to_string(G);
    return std::nullopt;
  }
  int64_t OH = (H + 2 * ph - dh * (KH - 1) - 1) / sh + 1;
  int64_t OW = (W + 2 * pw - dw * (KW - 1) - 1) / sw + 1;
  if (H + 2 * ph - dh * (KH - 1) - 1 < 0 || W + 2 * pw - dw * (KW - 1) - 1 < 0) {
    err.message = "conv2d: the kernel is larger than the padded input";
    return std::nullopt;
  }
  Value out = make_tensor(x.dtype, {N, O, OH, OW});
  int64_t opg = O / G;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      int64_t g = o / opg;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          for (int64_t i = 0; i < I; ++i) {
            int64_t c = g * I + i;
            for (int64_t kh = 0; kh < KH; ++kh) {
              int64_t h = oh * sh - ph + kh * dh;
              if (h < 0 || h >= H) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t wc = ow * sw - pw + kw * dw;
                if (wc < 0 || wc >= W) continue;
                acc += load_f(x, ((n * C + c) * H + h) * W + wc) *
                       load_f(w, ((o * I + i) * KH + kh) * KW + kw);
              }
            }
          }
          store_f(out, ((n * O + o) * OH + oh) * OW + ow, acc);
        }
    }
  return out;
}

// Value k of row n of a quantized w (ir/ops/Matmul.cpp): the byte itself at 8 bits; at 4, a
// nibble of byte k / 2 (the low one for even k) less 8.
int64_t quantized(const Value& w, int64_t row_bytes, int64_t n, int64_t k, int64_t bits) {
  if (bits == 8) return load_i(w, n * row_bytes + k);
  const auto byte = static_cast<uint8_t>(load_i(w, n * row_bytes + k / 2));
  return (k % 2 == 0 ? byte & 0x0F : byte >> 4) - 8;
}

Result matmul_q(const std::vector<Value>& args, OpError& err) {
  const Value &x = args[0], &w = args[1], &s = args[2];
  const std::optional<int64_t> bits = as_int(args[3]);
  if (!x.is_tensor() || !w.is_tensor() || !s.is_tensor() || x.shape().empty() ||
      w.shape().size() != 2 || s.shape().size() != 2 || !bits || (*bits != 4 && *bits != 8)) {
    err.message = "matmul_q expects x[..., K], w[N, K or K/2], scales[N, G] and bits 4 or 8";
    return std::nullopt;
  }
  const int64_t k = x.shape().back(), n = w.shape()[0], groups = s.shape()[1];
  const int64_t row_bytes = w.shape()[1];
  if ((*bits == 8 ? row_bytes : 2 * row_bytes) != k || s.shape()[0] != n || groups < 1 ||
      k % groups != 0) {
    err.message = "matmul_q: w " + type_string(w.dtype, w.shape()) + " and scales " +
                  type_string(s.dtype, s.shape()) + " do not quantize " +
                  std::to_string(k) + " values per row";
    return std::nullopt;
  }
  std::vector<int64_t> out_shape(x.shape().begin(), x.shape().end() - 1);
  out_shape.push_back(n);
  Value out = make_tensor(x.dtype, out_shape);
  const int64_t rows = k == 0 ? 0 : x.numel() / k, group = k / groups;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t q = 0; q < k; ++q)
        acc += load_f(x, i * k + q) * (static_cast<double>(quantized(w, row_bytes, j, q, *bits)) *
                                       load_f(s, j * groups + q / group));
      store_f(out, i * n + j, acc);
    }
  return out;
}

} // namespace

Result eval_linalg(const std::string& op, const std::vector<Value>& args, OpError& err) {
  switch (ir::find_op(op)->id) {
  case ir::OpId::matmul:
    return matmul(args[0], args[1], err);
  case ir::OpId::matmul_q:
    return matmul_q(args, err);
  default:
    return conv2d(args, err);
  }
}

} // namespace dsc::reference
