#pragma once
// The dtype table (ir/DTypes.def) as the runtime sees it: libdsc_runtime.so does not link the
// compiler, so it expands the table here, once, and every reader (dtype names, .npy descrs,
// .safetensors dtypes) looks a dtype up in this one array.

#include <dlpack/dlpack.h>

namespace dsc::runtime {

struct RuntimeDType {
  const char* name;        // "f32": .dsc text, manifests, messages
  DLDataType type;         // its DLPack type (bool as uint8)
  const char* npy;         // the .npy descr, or null where NumPy has none (bf16)
  const char* safetensors; // the .safetensors header's dtype string
};

inline constexpr RuntimeDType kRuntimeDTypes[] = {
#define DSC_DTYPE(Enum, name, bits, dl_code, is_float, is_int, npy, safetensors, compute,      \
                  tolerance)                                                                       \
  {name, {dl_code, bits, 1}, npy, safetensors},
#include "ir/DTypes.def"
};

} // namespace dsc::runtime
