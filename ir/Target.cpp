#include "ir/Target.h"

#include "ir/LibraryRoutine.h"

namespace dsc::ir {

namespace {

constexpr unsigned kCpu = 1u << static_cast<unsigned>(TargetKind::Cpu);
constexpr unsigned kCuda = 1u << static_cast<unsigned>(TargetKind::Cuda);

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
  return kind == TargetKind::Cuda ? "cuda" : "cpu";
}

bool Target::runs(ForKind loop) const {
  return (loop_targets(loop) & (1u << static_cast<unsigned>(kind))) != 0;
}

bool Target::offers(std::string_view symbol) const {
  const LibraryRoutine* r = find_library_routine(symbol);
  return r && offers(*r);
}

bool Target::offers(const LibraryRoutine& routine) const { return routine.target == kind; }

const LibraryRoutine* Target::preferred_routine(RoutineRole role) const {
  for (const LibraryRoutine& r : all_library_routines())
    if (r.role == role && r.preferred && offers(r)) return &r;
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

} // namespace dsc::ir
