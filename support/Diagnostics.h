#pragma once
// User-facing diagnostics: `file:line:col: error: message`, then the source line and a caret,
// then notes. User errors are reported here and returned as failure; they never throw and
// never abort (internal bugs go through internal_assert instead).

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dsc {

// A position in a source buffer; file 0 is "no location".
struct SourceLoc {
  uint32_t file = 0;
  uint32_t line = 0; // 1-based
  uint32_t col = 0;  // 1-based, in bytes
  bool valid() const { return file != 0 && line != 0; }
};

// Owns the text of every buffer that diagnostics may point into.
class SourceManager {
public:
  // Returns the buffer's id (never 0).
  uint32_t add(std::string name, std::string text);
  const std::string& name(uint32_t file) const;
  const std::string& text(uint32_t file) const;
  // The text of one line, without its newline; empty when out of range.
  std::string_view line(uint32_t file, uint32_t line) const;

private:
  struct Buffer {
    std::string name;
    std::string text;
    std::vector<size_t> line_starts;
  };
  std::vector<Buffer> buffers_;
};

enum class Severity : uint8_t { Error, Warning, Note };

// What a tool may recognise a diagnostic by (support/DiagnosticCodes.def).
enum class DiagnosticCode : uint8_t {
  None,
#define DSC_DIAGNOSTIC_CODE(code, summary) code,
#include "support/DiagnosticCodes.def"
};

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
  DiagnosticCode code = DiagnosticCode::None;
  std::string subject; // what the code is about (an op's name), for a coded diagnostic
  struct Note {
    SourceLoc loc; // may be invalid: then the note has no location
    std::string message;
  };
  std::vector<Note> notes;
};

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager& sources) : sources_(&sources) {}

  // Records an error and returns it so notes can be attached:
  //   diags.error(loc, "unknown op 'foo'").notes.push_back({loc2, "did you mean 'add'?"});
  Diagnostic& error(SourceLoc loc, std::string message);
  Diagnostic& warning(SourceLoc loc, std::string message);
  // Records a diagnostic made elsewhere (another engine over the same sources).
  void report(Diagnostic d);

  const SourceManager& sources() const { return *sources_; }
  bool has_errors() const { return error_count_ > 0; }
  size_t error_count() const { return error_count_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  void clear();

  // Prints every diagnostic in the order reported.
  void print(std::ostream& os) const;
  void print(std::ostream& os, const Diagnostic& d) const;

private:
  const SourceManager* sources_;
  std::vector<Diagnostic> diagnostics_;
  size_t error_count_ = 0;
};

} // namespace dsc
