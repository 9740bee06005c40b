#pragma once
// The state of one `dscc repl` session, independent of terminal I/O so that transcripts can be
// tested. The session is a function under construction: declared parameters, `where` clauses
// and `let` bindings, re-checked as a whole after each input, with an optionally loaded module
// whose functions it may call. An input that does not check is reported and dropped, and the
// session goes on.

#include <string>
#include <vector>

#include "support/Diagnostics.h"
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
  // A parameter, where clause or let as the session's function holds it, and where it came
  // from: the typed line `number` (1-based, counting every line typed), whose column
  // `offset + 1` holds text[0] (`let x: T` is held as `x: T`, offset 4).
  struct Entry {
    std::string text;
    uint32_t number = 0;
    int32_t offset = 0;
  };
  // Where a line of the checked source came from, to show diagnostics at the line the user
  // typed or the loaded file's own line: a typed entry (its column = the source's - shift), a
  // line of the loaded file, or neither (the synthesized function's own text).
  struct Origin {
    enum class Kind { None, Typed, Loaded } kind = Kind::None;
    uint32_t line = 0;
    int32_t shift = 0;
  };
  class LocationMap;
  struct Attempt {
    bool ok = false;
    std::string output; // diagnostics on failure; warnings on the current line on success
  };
  // Checks the session's function made of these entries; on success `report` holds the
  // formatted types of the bindings after the first `report_from` lets.
  Attempt check(const std::vector<Entry>& params, const std::vector<Entry>& wheres,
                const std::vector<Entry>& lets, size_t report_from, std::string* report,
                std::string* ir_text = nullptr, std::string* facts_text = nullptr,
                std::string* signature_of = nullptr, std::string* fusion_of = nullptr);
  std::string source(const std::vector<Entry>& params, const std::vector<Entry>& wheres,
                     const std::vector<Entry>& lets, std::vector<Origin>* origins) const;
  // The diagnostics of a check of `file` (the synthesized source), at the places the user
  // knows: typed lines as `<repl>:LINE:COL`, loaded lines in the loaded file. With
  // `only_current`, just those on the line being handled.
  std::string show(const DiagnosticEngine& diags, uint32_t file, const std::vector<Origin>& origins,
                   bool only_current) const;
  // The line being handled, as an entry: `text` starts at its column `offset + 1`.
  Entry typed(std::string text, int32_t offset = 0) const;
  // Adds a parameter when the session still checks with it.
  std::string declare(Entry param);
  // `:type EXPR` (EXPR at column `at + 1` of the line): its type, or a function's signature.
  std::string type_of(const std::string& expr, size_t at);

  std::string loaded_name_;
  std::string loaded_text_;
  std::vector<Entry> params_;
  std::vector<Entry> wheres_;
  std::vector<Entry> lets_;
  std::vector<std::string> typed_; // every line typed so far, trimmed
  symbolic::Prover prover_;
};

} // namespace dsc::dscc
