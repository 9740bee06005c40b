#include "tools/run_support/RunOutputs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "runtime/Npy.h"
#include "support/HalfFloat.h"
#include "runtime/cuda/DeviceTensor.h"

namespace dsc::run_support {

bool outputs_to_host(std::vector<runtime::Tensor>* outputs, std::string* error) {
  for (size_t i = 0; i < outputs->size(); ++i) {
    runtime::Tensor& t = (*outputs)[i];
    if (t.on_host()) continue;
    std::optional<runtime::Tensor> host = runtime::cuda::to_host(t, error);
    if (!host) {
      *error = "output " + std::to_string(i) + ": " + *error;
      return false;
    }
    t = std::move(*host);
  }
  return true;
}

std::string summarize(const std::string& name, const runtime::Tensor& t) {
  std::string s = name + ": " + t.type_string();
  DLDataType d = t.dtype();
  if (d.code != kDLFloat || (d.bits != 32 && d.bits != 64) || t.numel() == 0 || !t.on_host())
    return s;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = d.bits == 32 ? double(t.data_as<float>()[i]) : t.data_as<double>()[i];
    lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "  min %.4g  max %.4g  mean %.4g", lo, hi,
                sum / double(t.numel()));
  return s + buf;
}

bool write_outputs(const std::string& dir, const std::vector<runtime::Tensor>& outputs,
                   std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = "cannot create '" + dir + "': " + ec.message();
    return false;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const runtime::Tensor& t = outputs[i];
    // NumPy has no bfloat16: a bf16 result is written as f32, which holds it exactly.
    runtime::Tensor widened;
    if (t.dtype().code == kDLBfloat) {
      widened = runtime::Tensor::zeros(DLDataType{kDLFloat, 32, 1}, t.shape());
      for (int64_t j = 0; j < t.numel(); ++j)
        widened.data_as<float>()[j] = bf16_to_float(t.data_as<uint16_t>()[j]);
    }
    if (!runtime::write_npy(dir + "/output" + std::to_string(i) + ".npy",
                            t.dtype().code == kDLBfloat ? widened : t, error))
      return false;
  }
  return true;
}

namespace {

// Element i of a host tensor as a double; integers exactly up to 2^53.
double element(const runtime::Tensor& t, int64_t i) {
  const DLDataType d = t.dtype();
  if (d.code == kDLFloat && d.bits == 32) return t.data_as<float>()[i];
  if (d.code == kDLFloat && d.bits == 64) return t.data_as<double>()[i];
  if (d.code == kDLFloat && d.bits == 16) return half_to_float(t.data_as<uint16_t>()[i]);
  if (d.code == kDLBfloat) return bf16_to_float(t.data_as<uint16_t>()[i]);
  if (d.code == kDLInt && d.bits == 64) return static_cast<double>(t.data_as<int64_t>()[i]);
  if (d.code == kDLInt && d.bits == 32) return t.data_as<int32_t>()[i];
  if (d.code == kDLInt && d.bits == 8) return t.data_as<int8_t>()[i];
  return t.data_as<uint8_t>()[i]; // bool
}

bool is_float(DLDataType d) {
  return d.code == kDLFloat || d.code == kDLBfloat;
}

} // namespace

std::string Comparison::report() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: %s max_abs_err=%.3g max_rel_err=%.3g mismatches=%lld/%lld",
                name.c_str(), type.c_str(), max_abs_error, max_rel_error,
                static_cast<long long>(mismatches), static_cast<long long>(elements));
  std::string s = buf;
  if (ok()) return s + " ok";
  std::snprintf(buf, sizeof buf, " FAILED (worst at flat index %lld: %.9g, expected %.9g)",
                static_cast<long long>(worst), worst_actual, worst_expected);
  return s + buf;
}

bool compare_outputs(const std::string& dir, const std::vector<runtime::Tensor>& outputs,
                     const Tolerance& tolerance, std::vector<Comparison>* results,
                     std::string* error) {
  results->clear();
  for (size_t o = 0; o < outputs.size(); ++o) {
    const runtime::Tensor& actual = outputs[o];
    Comparison c;
    c.name = "output" + std::to_string(o);
    c.type = actual.type_string();
    std::optional<runtime::Tensor> expected = runtime::read_npy(dir + "/" + c.name + ".npy", error);
    if (!expected) return false;
    if (!runtime::same_dtype(actual.dtype(), expected->dtype()) ||
        actual.shape() != expected->shape()) {
      *error = c.name + " is " + actual.type_string() + ", but " + dir + "/" + c.name +
               ".npy holds " + expected->type_string();
      return false;
    }
    const bool floats = is_float(actual.dtype());
    c.elements = actual.numel();
    double worst_excess = -1;
    for (int64_t i = 0; i < c.elements; ++i) {
      const double a = element(actual, i), e = element(*expected, i);
      bool match;
      double diff = 0;
      if (std::isnan(a) || std::isnan(e)) {
        match = std::isnan(a) && std::isnan(e);
        diff = match ? 0 : INFINITY;
      } else if (std::isinf(a) || std::isinf(e)) {
        match = a == e;
        diff = match ? 0 : INFINITY;
      } else {
        diff = std::fabs(a - e);
        match = floats ? diff <= tolerance.atol + tolerance.rtol * std::fabs(e) : a == e;
        if (e != 0) c.max_rel_error = std::max(c.max_rel_error, diff / std::fabs(e));
      }
      c.max_abs_error = std::max(c.max_abs_error, diff);
      if (match) continue;
      ++c.mismatches;
      if (diff > worst_excess) {
        worst_excess = diff;
        c.worst = i;
        c.worst_actual = a;
        c.worst_expected = e;
      }
    }
    results->push_back(c);
  }
  return true;
}

BenchStats bench_stats(std::vector<double> ms) {
  BenchStats s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  double sum = 0;
  for (double v : ms)
    sum += v;
  s.mean = sum / double(n);
  s.min = ms.front();
  s.max = ms.back();
  s.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  return s;
}

} // namespace dsc::run_support
