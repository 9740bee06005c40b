#pragma once
// Names as a message lists them: "a", "a and b", "a, b and c" (or "... or c").

#include <string>
#include <string_view>
#include <vector>

namespace dsc {

inline std::string word_list(const std::vector<std::string>& words, std::string_view last = "and") {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) (out += i + 1 == words.size() ? " " + std::string(last) + " " : ", ");
    out += words[i];
  }
  return out;
}

} // namespace dsc
