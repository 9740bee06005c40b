#pragma once
// .safetensors files: an 8-byte little-endian header length N, N bytes of JSON header, then
// the data buffer. The header maps each tensor name to {"dtype", "shape", "data_offsets"},
// offsets relative to the data buffer; "__metadata__" (string to string) is ignored on read.
// dtypes: F32 F64 F16 BF16 I8 I32 I64 BOOL.
//
// Reading follows the format's own validation: every offset pair must be in range and match
// shape * itemsize, and the tensors must tile the data buffer with no overlap and no holes
// (so a file cannot hide other content). Malformed input gives an error string and nullopt;
// it never crashes and never reads past the buffer.

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/Tensor.h"

namespace dsc::runtime {

using TensorMap = std::map<std::string, Tensor>;

std::optional<TensorMap> read_safetensors_bytes(std::string_view bytes, std::string* error);
// Errors are prefixed with the path.
std::optional<TensorMap> read_safetensors(const std::string& path, std::string* error);

// Tensors are laid out in name order; the header is padded with spaces to a multiple of 8
// bytes so that the data stays aligned. Fails on an undefined tensor, a dtype the format
// lacks, the reserved name "__metadata__", or a name that is not valid UTF-8.
std::optional<std::string> safetensors_bytes(const TensorMap& tensors, std::string* error);
bool write_safetensors(const std::string& path, const TensorMap& tensors, std::string* error);

} // namespace dsc::runtime
