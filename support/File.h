#pragma once
// Whole-file reads and writes with the system's reason on failure, for every place that loads
// or saves a file (.dsc sources, .npy, .safetensors).

#include <optional>
#include <string>
#include <string_view>

namespace dsc {

// The file's bytes, or nullopt with *error set to strerror's text ("No such file or
// directory", "Is a directory").
std::optional<std::string> read_file(const std::string& path, std::string* error);

// Replaces the file's contents; false with *error set to the reason.
bool write_file(const std::string& path, std::string_view bytes, std::string* error);

} // namespace dsc
