// libFuzzer entry point for the manifest reader (runtime/Manifest.h, from_json), which reads the
// JSON that a built .so embeds in `dsc_manifest`: any text must end in an error string or in a
// manifest, never in a crash, an uncaught JSON exception, a leak or a sanitizer report. A
// failure must say why and leave the output alone; a manifest that reads must write (to_json)
// as text that reads back and writes again identically.
//
// Built by tools/scripts/fuzz.sh (clang, -DDSC_FUZZ=ON, ASan+UBSan), seeded from
// tests/fuzz/corpus/fuzz_manifest (tests/fuzz/make_seeds.py writes the valid seeds).

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/Manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  dsc::runtime::Manifest m;
  m.version = -1; // a sentinel: a failed read must not touch the output
  std::string error;
  if (!dsc::runtime::from_json(text, &m, &error)) {
    if (error.empty() || m.version != -1 || !m.functions.empty()) __builtin_trap();
    return 0;
  }
  for (const dsc::runtime::FunctionInfo& f : m.functions) {
    if (m.find(f.name) != &f) __builtin_trap(); // names are unique
    // The device is one of the table's (ir/TargetKinds.def), and spells back to itself.
    if (dsc::runtime::device_kind_named(dsc::runtime::device_kind_name(f.device)) != f.device)
      __builtin_trap();
    for (const dsc::runtime::TensorInfo& p : f.params) (void)p.type_string();
    for (const dsc::runtime::TensorInfo& o : f.outputs) (void)o.type_string();
  }
  std::string written = dsc::runtime::to_json(m);
  dsc::runtime::Manifest again;
  std::string again_error;
  if (!dsc::runtime::from_json(written, &again, &again_error)) __builtin_trap();
  if (dsc::runtime::to_json(again) != written) __builtin_trap();
  return 0;
}
