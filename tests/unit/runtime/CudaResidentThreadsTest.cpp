// dsc_rt_cuda_resident_threads, which the host code asks before it picks a row kernel's
// launch (the wider one for few rows, docs/cuda.md), and DSC_CUDA_RESIDENT_THREADS, which
// overrides the device's count so that both launches can be timed on one device. On the block
// emulator (DSC_CUDA_EMULATE=1, set before anything asks for the device), which reports one
// multiprocessor of 2048 threads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "runtime/HostCall.h"
#include "runtime/Model.h"
#include "runtime/dsc_runtime.h"

namespace dsc::runtime {
namespace {

using ::testing::StartsWith;

const bool kEmulated = [] {
  setenv("DSC_CUDA_EMULATE", "1", 1);
  return true;
}();

FunctionInfo cuda_function() {
  FunctionInfo f;
  f.name = "rows";
  f.host_symbol = "rows_host";
  f.device = DeviceKind::Cuda;
  return f;
}

// The count the host code sees with DSC_CUDA_RESIDENT_THREADS set to `value` (unset when
// null), and the call's status and error.
struct Seen {
  int32_t status;
  int64_t threads;
  std::string error;
};

Seen resident_threads(const char* value) {
  if (value)
    setenv("DSC_CUDA_RESIDENT_THREADS", value, 1);
  else
    unsetenv("DSC_CUDA_RESIDENT_THREADS");
  FunctionInfo info = cuda_function();
  dsc_call call(&info);
  Seen seen{0, -1, ""};
  seen.status = dsc_rt_cuda_resident_threads(&call, &seen.threads);
  seen.error = call.error;
  unsetenv("DSC_CUDA_RESIDENT_THREADS");
  return seen;
}

TEST(CudaResidentThreads, TheDevicesCountUnlessOverridden) {
  ASSERT_TRUE(kEmulated);
  Seen device = resident_threads(nullptr);
  ASSERT_EQ(device.status, 0) << device.error;
  EXPECT_EQ(device.threads, 2048);

  for (const auto& [value, threads] :
       {std::pair<const char*, int64_t>{"1", 1}, {"270336", 270336}, {"4096", 4096}}) {
    Seen seen = resident_threads(value);
    ASSERT_EQ(seen.status, 0) << value << ": " << seen.error;
    EXPECT_EQ(seen.threads, threads) << value;
  }
}

TEST(CudaResidentThreads, BadOverridesAreErrors) {
  for (const char* value : {"0", "-5", "", "12x", "x", "1e3", "99999999999999999999999"}) {
    Seen seen = resident_threads(value);
    EXPECT_EQ(seen.status, 1) << "'" << value << "'";
    EXPECT_THAT(seen.error, StartsWith("DSC_CUDA_RESIDENT_THREADS of 'rows': a positive number "
                                       "of threads, not '" +
                                       std::string(value) + "'"));
  }
}

} // namespace
} // namespace dsc::runtime
