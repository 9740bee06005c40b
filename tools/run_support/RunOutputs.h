#pragma once
// What `dscc run` and `dsc-run` do with a function's results: bring them to the host, print a
// summary per output, write them as .npy files, or compare them with .npy files.

#include <string>
#include <vector>

#include "runtime/Tensor.h"

namespace dsc::run_support {

// Replaces each device tensor by its host copy (cuda/DeviceTensor.h); host tensors stay.
bool outputs_to_host(std::vector<runtime::Tensor>* outputs, std::string* error);

// `output0: f32[2, 7, 768]  min -2.91  max 3.02  mean 1.3e-09` (f32 and f64), or just the
// name and type. `t` is on the host.
std::string summarize(const std::string& name, const runtime::Tensor& t);

// DIR/output0.npy, DIR/output1.npy, ... (DIR is created); false with *error set.
bool write_outputs(const std::string& dir, const std::vector<runtime::Tensor>& outputs,
                   std::string* error);

// numpy.allclose's test, element by element: |actual - expected| <= atol + rtol * |expected|;
// NaN matches only NaN. Integers and bools must be equal.
struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
};

struct Comparison {
  std::string name; // "output0"
  std::string type; // "f32[2, 7, 768]"
  int64_t elements = 0;
  int64_t mismatches = 0;   // elements outside the tolerance
  double max_abs_error = 0; // over all elements (NaN pairs excluded)
  double max_rel_error = 0; // |a - e| / |e| where e != 0
  int64_t worst = -1;       // the flat index of the largest |a - e| beyond the tolerance
  double worst_actual = 0, worst_expected = 0;
  bool ok() const { return mismatches == 0; }
  // "output0: f32[2, 7, 768] max_abs_err=1.2e-06 max_rel_err=3.1e-05 mismatches=0/10752 ok"
  std::string report() const;
};

// Compares each output (on the host) with DIR/output<i>.npy. False with *error set when a
// file is missing or unreadable, or its dtype or shape differs; otherwise *results gets one
// Comparison per output (some may have mismatches).
bool compare_outputs(const std::string& dir, const std::vector<runtime::Tensor>& outputs,
                     const Tolerance& tolerance, std::vector<Comparison>* results,
                     std::string* error);

// Statistics of --bench's timed runs, in milliseconds.
struct BenchStats {
  double mean = 0, min = 0, median = 0, max = 0;
};
BenchStats bench_stats(std::vector<double> ms);

} // namespace dsc::run_support
