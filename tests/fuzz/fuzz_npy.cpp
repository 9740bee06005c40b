// libFuzzer entry point for the .npy reader (runtime/Npy.h): any bytes, as a .npy file, must end
// in an error string or in a tensor, never in a crash, a read past the buffer, a leak or a
// sanitizer report. A tensor that reads must also write as bytes that read back as the same
// tensor, and a failure must always say why.
//
// Built by tools/scripts/fuzz.sh (clang, -DDSC_FUZZ=ON, ASan+UBSan), seeded from
// tests/fuzz/corpus/fuzz_npy (tests/fuzz/make_seeds.py writes the valid seeds).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/Npy.h"
#include "tests/fuzz/SameTensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string error;
  std::optional<dsc::runtime::Tensor> t = dsc::runtime::read_npy_bytes(bytes, &error);
  if (!t) {
    if (error.empty()) __builtin_trap(); // failure must always be explained
    return 0;
  }
  if (!t->defined() || !dsc::runtime::npy_supports(t->dtype())) __builtin_trap();
  std::string written = dsc::runtime::npy_bytes(*t);
  std::string again_error;
  std::optional<dsc::runtime::Tensor> again = dsc::runtime::read_npy_bytes(written, &again_error);
  if (!again || !dsc::fuzz::same_tensor(*t, *again)) __builtin_trap();
  return 0;
}
