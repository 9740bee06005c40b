#include "support/Suggest.h"

#include <algorithm>

namespace dsc {

size_t edit_distance(std::string_view a, std::string_view b) {
  size_t n = a.size(), m = b.size();
  // Three rows of the dynamic-programming table: a swap looks two rows back.
  std::vector<size_t> prev2(m + 1), prev(m + 1), row(m + 1);
  for (size_t j = 0; j <= m; ++j)
    prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    row[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, row);
  }
  return prev[m];
}

std::string closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(1, name.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    if (c == name || c.empty()) continue;
    // Names far apart in length cannot be close; skip them before the quadratic work.
    size_t diff = c.size() > name.size() ? c.size() - name.size() : name.size() - c.size();
    if (diff > limit) continue;
    size_t d = edit_distance(name, c);
    if (d >= name.size() || d >= c.size()) continue;
    if (d < best_distance || (d == best_distance && c < best)) {
      best = c;
      best_distance = d;
    }
  }
  return best_distance <= limit ? best : std::string();
}

void suggest(Diagnostic& d, std::string_view name, const std::vector<std::string>& candidates,
             SourceLoc loc) {
  std::string best = closest_name(name, candidates);
  if (!best.empty()) d.notes.push_back({loc, "did you mean '" + best + "'?"});
}

} // namespace dsc
