// max_pool2d and avg_pool2d over NCHW inputs, written directly from their definition: each
// output element combines the window of the input at rows oh*sh - ph .. + kh - 1 (columns
// likewise); positions outside the input (the padding) are skipped. max propagates NaN as the
// reduction max does; avg sums in double and divides by the number of input positions in the
// window, or by kh*kw with count_include_pad. Stride absent means the kernel.

#include <cmath>

#include "backends/reference/Value.h"
#include "ir/OpRegistry.h"

namespace dsc::reference {

Result eval_pool(const std::string& op, const std::vector<Value>& args, OpError& err) {
  const bool average = ir::find_op(op)->id == ir::OpId::avg_pool2d;
  const Value& x = args[0];
  if (!x.is_tensor() || x.shape().size() != 4) {
    err.message = op + " expects a rank-4 NCHW input";
    return std::nullopt;
  }
  if (average ? !ir::is_float(x.dtype) : x.dtype == ir::DType::Bool) {
    err.message = op + ": unsupported dtype in " + type_string(x.dtype, x.shape());
    return std::nullopt;
  }
  auto kernel = as_int_pair(args[1]);
  auto stride = args[2].kind == Value::Kind::None ? kernel : as_int_pair(args[2]);
  auto padding = as_int_pair(args[3]);
  bool include_pad = average && as_bool(args[4]).value_or(false);
  if (!kernel || !stride || !padding) {
    err.message = op + ": kernel, stride and padding must be ints or pairs";
    return std::nullopt;
  }
  int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  auto [kh, kw] = *kernel;
  auto [sh, sw] = *stride;
  auto [ph, pw] = *padding;
  if (kh < 1 || kw < 1 || sh < 1 || sw < 1 || ph < 0 || pw < 0 || ph >= kh || pw >= kw ||
      H + 2 * ph < kh || W + 2 * pw < kw) {
    err.message = op + ": invalid window for input " + type_string(x.dtype, x.shape());
    return std::nullopt;
  }
  int64_t OH = (H + 2 * ph - kh) / sh + 1, OW = (W + 2 * pw - kw) / sw + 1;
  Value out = make_tensor(x.dtype, {N, C, OH, OW});
  bool is_f = ir::is_float(x.dtype);
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double facc = 0;
        int64_t iacc = 0, count = 0;
        for (int64_t i = 0; i < kh; ++i) {
          int64_t h = oh * sh - ph + i;
          if (h < 0 || h >= H) continue;
          for (int64_t j = 0; j < kw; ++j) {
            int64_t w = ow * sw - pw + j;
            if (w < 0 || w >= W) continue;
            int64_t at = (nc * H + h) * W + w;
            if (average) {
              facc += load_f(x, at);
            } else if (is_f) {
              double v = load_f(x, at);
              if (count == 0 || std::isnan(v))
                facc = v;
              else if (!std::isnan(facc))
                facc = std::max(facc, v);
            } else {
              int64_t v = load_i(x, at);
              iacc = count == 0 ? v : std::max(iacc, v);
            }
            ++count;
          }
        }
        int64_t o = (nc * OH + oh) * OW + ow;
        if (average)
          store_f(out, o, facc / static_cast<double>(include_pad ? kh * kw : count));
        else if (is_f)
          store_f(out, o, facc);
        else
          store_i(out, o, iacc);
      }
  return out;
}

} // namespace dsc::reference
