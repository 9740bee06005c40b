#include "runtime/DeviceKind.h"

#include <string>
#include <vector>

#include "support/WordList.h"

namespace dsc::runtime {

namespace {

struct Row {
  DeviceKind kind;
  const char* name;
  DLDeviceType dl;
};

constexpr Row kRows[] = {
#define DSC_TARGET_KIND(Enum, name, dl_device, device_noun, native, widened) {DeviceKind::Enum, name, dl_device},
#include "ir/TargetKinds.def"
};

const Row& row(DeviceKind kind) {
  return kRows[static_cast<size_t>(kind)];
}

} // namespace

const char* device_kind_name(DeviceKind kind) {
  return row(kind).name;
}

std::optional<DeviceKind> device_kind_named(std::string_view name) {
  for (const Row& r : kRows)
    if (name == r.name) return r.kind;
  return std::nullopt;
}

const char* device_kind_names() {
  static const std::string names = [] {
    std::vector<std::string> words;
    for (const auto& row : kRows) words.push_back(row.name);
    return word_list(words, "or");
  }();
  return names.c_str();
}

DLDeviceType dl_device_type(DeviceKind kind) {
  return row(kind).dl;
}

} // namespace dsc::runtime
