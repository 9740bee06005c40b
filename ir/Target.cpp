#include "ir/Target.h"

#include "ir/LibraryRoutine.h"
#include "support/WordList.h"

namespace dsc::ir {

namespace {

// kCpu, kCuda: a kind's bit in ir/ForKinds.def's `targets` column.
#define DSC_TARGET_KIND(Enum, name, dl_device, device_noun, native, widened)                                        \
  constexpr unsigned k##Enum = 1u << static_cast<unsigned>(TargetKind::Enum);
#include "ir/TargetKinds.def"

constexpr const char* kTargetKindNames[] = {
#define DSC_TARGET_KIND(Enum, name, dl_device, device_noun, native, widened) name,
#include "ir/TargetKinds.def"
};
constexpr const char* kDeviceNouns[] = {
#define DSC_TARGET_KIND(Enum, name, dl_device, device_noun, native, widened) device_noun,
#include "ir/TargetKinds.def"
};

// kBool, kF32, ...: a dtype's bit in ir/TargetKinds.def's `native` and `widened` columns.
#define DSC_DTYPE(Enum, name, bits, dl_code, is_float, is_int, npy, safetensors, compute,      \
                  tolerance)                                                                       \
  constexpr unsigned k##Enum = 1u << static_cast<unsigned>(DType::Enum);
#include "ir/DTypes.def"

struct DTypeColumns {
  unsigned native, widened;
};
constexpr DTypeColumns kDTypeColumns[] = {
#define DSC_TARGET_KIND(Enum, name, dl_device, device_noun, native, widened) {native, widened},
#include "ir/TargetKinds.def"
};

unsigned loop_targets(ForKind kind) {
  switch (kind) {
#define DSC_FOR_KIND(k, spelling, targets)                                                         \
  case ForKind::k:                                                                                 \
    return targets;
#include "ir/ForKinds.def"
  }
  return 0;
}

} // namespace

const char* target_kind_name(TargetKind kind) {
  return kTargetKindNames[static_cast<size_t>(kind)];
}

const char* target_device_noun(TargetKind kind) {
  return kDeviceNouns[static_cast<size_t>(kind)];
}

const std::vector<TargetKind>& all_target_kinds() {
  static const std::vector<TargetKind> kinds = {
#define DSC_TARGET_KIND(Enum, name, dl_device, device_noun, native, widened) TargetKind::Enum,
#include "ir/TargetKinds.def"
  };
  return kinds;
}

std::optional<TargetKind> target_kind_named(std::string_view name) {
  for (TargetKind kind : all_target_kinds())
    if (name == target_kind_name(kind)) return kind;
  return std::nullopt;
}

std::string target_kind_names() {
  std::vector<std::string> names;
  for (TargetKind kind : all_target_kinds()) names.push_back(target_kind_name(kind));
  return word_list(names, "or");
}

bool Target::runs(ForKind loop) const {
  return (loop_targets(loop) & (1u << static_cast<unsigned>(kind))) != 0;
}

Arithmetic Target::arithmetic(DType dtype) const {
  const DTypeColumns& c = kDTypeColumns[static_cast<size_t>(kind)];
  const unsigned bit = 1u << static_cast<unsigned>(dtype);
  if (c.native & bit) return Arithmetic::Native;
  if (c.widened & bit) return Arithmetic::Widened;
  return Arithmetic::Unsupported;
}

std::string Target::computed_dtype_names() const {
  std::vector<std::string> names;
  for (DType d : kAllDTypes)
    if (arithmetic(d) != Arithmetic::Unsupported) names.push_back(dtype_name(d));
  return word_list(names);
}

bool Target::offers(std::string_view symbol) const {
  const LibraryRoutine* r = find_library_routine(symbol);
  return r && offers(*r);
}

bool Target::offers(const LibraryRoutine& routine) const { return routine.target == kind; }

const LibraryRoutine* Target::preferred_routine(RoutineRole role, DType dtype) const {
  for (const LibraryRoutine& r : all_library_routines())
    if (r.role == role && r.dtype == dtype && r.preferred && offers(r)) return &r;
  return nullptr;
}

std::string Target::describe() const {
  std::string s = target_kind_name(kind);
  std::string details;
  auto add = [&](const std::string& d) { details += (details.empty() ? "" : ", ") + d; };
  if (kind == TargetKind::Cpu) {
    add(cpu);
    if (!features.empty()) add(features);
    if (vector_bits) add(std::to_string(vector_bits) + "-bit vectors");
  } else {
    for (int sm : sm_archs) add("sm_" + std::to_string(sm));
  }
  return details.empty() ? s : s + " (" + details + ")";
}

Target cpu_target() { return Target{}; }

Target cuda_target() {
  Target t;
  t.kind = TargetKind::Cuda;
  t.cpu.clear();
  t.sm_archs = {80, 90};
  return t;
}

Target default_target(TargetKind kind) {
  switch (kind) {
  case TargetKind::Cpu:
    return cpu_target();
  case TargetKind::Cuda:
    return cuda_target();
  }
  return cpu_target();
}

} // namespace dsc::ir
