#pragma once
// `dscc check --verify-diagnostics`, after MLIR's: the file states the errors it expects,
//   let y = a + b   # expected-error {{cannot broadcast}}
//   # expected-error@+1 {{unknown op 'foo'}}
//   let u = foo(a)
// and the check passes when every reported error is expected (on that line, containing that
// text) and every expectation is met. `@+N` and `@-N` point N lines below or above.

#include <string>

#include "support/Diagnostics.h"

namespace dsc::dscc {

// Compares the diagnostics of buffer `file` with its expectations. Returns true when they
// agree; otherwise writes what differs to `report`.
bool verify_diagnostics(const SourceManager& sources, uint32_t file,
                        const DiagnosticEngine& diags, std::string* report);

} // namespace dsc::dscc
