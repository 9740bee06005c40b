// libFuzzer entry point for the .safetensors reader (runtime/Safetensors.h): any bytes, as a
// .safetensors file, must end in an error string or in a map of tensors, never in a crash, a read
// past the buffer, an uncaught JSON exception, a leak or a sanitizer report. Tensors that read
// must also write as bytes that read back as the same tensors, and a failure must always say
// why.
//
// Built by tools/scripts/fuzz.sh (clang, -DDSC_FUZZ=ON, ASan+UBSan), seeded from
// tests/fuzz/corpus/fuzz_safetensors (tests/fuzz/make_seeds.py writes the valid seeds).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/Safetensors.h"
#include "tests/fuzz/SameTensor.h"

namespace {

bool same_map(const dsc::runtime::TensorMap& a, const dsc::runtime::TensorMap& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
    if (ia->first != ib->first || !dsc::fuzz::same_tensor(ia->second, ib->second)) return false;
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string error;
  std::optional<dsc::runtime::TensorMap> tensors =
      dsc::runtime::read_safetensors_bytes(bytes, &error);
  if (!tensors) {
    if (error.empty()) __builtin_trap(); // failure must always be explained
    return 0;
  }
  // Whatever the reader accepts, the writer must be able to write.
  std::string write_error;
  std::optional<std::string> written = dsc::runtime::safetensors_bytes(*tensors, &write_error);
  if (!written) __builtin_trap();
  std::string again_error;
  std::optional<dsc::runtime::TensorMap> again =
      dsc::runtime::read_safetensors_bytes(*written, &again_error);
  if (!again || !same_map(*tensors, *again)) __builtin_trap();
  return 0;
}
