#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace dsc::symbolic {

enum class Verdict : uint8_t { Proved, Disproved, Unknown };

const char* verdict_name(Verdict v);

} // namespace dsc::symbolic
