#pragma once
// The state of one `dscc repl` session, independent of terminal I/O so that transcripts can be
// tested. The session is a function under construction: declared parameters, `where` clauses
// and `let` bindings, re-checked as a whole after each input, with an optionally loaded module
// whose functions it may call. An input that does not check is reported and dropped, and the
// session goes on.

#include <string>
#include <vector>

#include "symbolic/Prover.h"

namespace dsc::dscc {

class ReplSession {
public:
  // Handles one line of input and returns what to print (possibly empty). Sets `quit` on
  // `:quit`.
  std::string handle(const std::string& line, bool* quit);

  std::string load(const std::string& path);
  static const char* help();

private:
  struct Attempt {
    bool ok = false;
    std::string output; // diagnostics on failure
  };
  // Checks the session plus `extra_lets`; on success `typed_text` holds the formatted types of
  // the bindings after the first `skip` ones.
  Attempt check(const std::vector<std::string>& params, const std::vector<std::string>& wheres,
                const std::vector<std::string>& lets, size_t report_from, std::string* report,
                std::string* ir_text = nullptr, std::string* facts_text = nullptr);
  std::string source(const std::vector<std::string>& params, const std::vector<std::string>& wheres,
                     const std::vector<std::string>& lets) const;

  std::string loaded_name_;
  std::string loaded_text_;
  std::vector<std::string> params_;
  std::vector<std::string> wheres_;
  std::vector<std::string> lets_;
  symbolic::Prover prover_;
};

} // namespace dsc::dscc
