#pragma once
// The device a built function's inputs, outputs and intermediates live on: one per target kind
// (ir/TargetKinds.def, which the runtime expands without linking the compiler), parsed once
// from the manifest, then compared as an enum.

#include <dlpack/dlpack.h>

#include <optional>
#include <string_view>

namespace dsc::runtime {

enum class DeviceKind : unsigned char {
#define DSC_TARGET_KIND(Enum, name, dl_device, device_noun, native, widened) Enum,
#include "ir/TargetKinds.def"
};

// "cpu", "cuda": the manifest's spelling.
const char* device_kind_name(DeviceKind kind);
// The device a manifest names, or nullopt for a name that is none.
std::optional<DeviceKind> device_kind_named(std::string_view name);
// "cpu or cuda": for messages.
const char* device_kind_names();
// The DLPack device type of tensors on it (kDLCPU, kDLCUDA).
DLDeviceType dl_device_type(DeviceKind kind);

} // namespace dsc::runtime
