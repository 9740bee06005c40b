#pragma once
// "Did you mean" notes for misspelt names (ops, parameters, dtypes, variables, modules). One
// rule decides everywhere when a known name is close enough to suggest, so that the front end
// and the shape pass never disagree on the same typo.
//
// Distance is optimal string alignment: insertions, deletions, substitutions and swaps of
// neighbours each cost one, since `mxa` for `max` is as likely a slip as `mx`. A candidate is
// suggested when at most a third of the name is wrong (at least one edit is always allowed) and
// not every character of either string is: `ab` is no misspelling of `cd`. The name itself and
// empty names are never suggested. Ties go to the alphabetically first candidate, so the note
// does not depend on the order a caller happens to hold its names in.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "support/Diagnostics.h"

namespace dsc {

size_t edit_distance(std::string_view a, std::string_view b);

// The candidate to suggest for `name` by the rule above; empty when none is close.
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

// Adds the note "did you mean 'x'?" to `d` (at `loc`, which may be invalid) when a candidate is
// close; does nothing otherwise.
void suggest(Diagnostic& d, std::string_view name, const std::vector<std::string>& candidates,
             SourceLoc loc = {});

} // namespace dsc
