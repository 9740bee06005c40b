#include "support/Diagnostics.h"

#include <ostream>

#include "support/Assert.h"

namespace dsc {

uint32_t SourceManager::add(std::string name, std::string text) {
  Buffer b{std::move(name), std::move(text), {0}};
  for (size_t i = 0; i < b.text.size(); ++i)
    if (b.text[i] == '\n') b.line_starts.push_back(i + 1);
  buffers_.push_back(std::move(b));
  return static_cast<uint32_t>(buffers_.size());
}

const std::string& SourceManager::name(uint32_t file) const {
  internal_assert(file >= 1 && file <= buffers_.size()) << "bad source buffer " << file;
  return buffers_[file - 1].name;
}

const std::string& SourceManager::text(uint32_t file) const {
  internal_assert(file >= 1 && file <= buffers_.size()) << "bad source buffer " << file;
  return buffers_[file - 1].text;
}

std::string_view SourceManager::line(uint32_t file, uint32_t line) const {
  if (file < 1 || file > buffers_.size()) return {};
  const Buffer& b = buffers_[file - 1];
  if (line < 1 || line > b.line_starts.size()) return {};
  size_t start = b.line_starts[line - 1];
  size_t end = line < b.line_starts.size() ? b.line_starts[line] - 1 : b.text.size();
  std::string_view v(b.text);
  v = v.substr(start, end - start);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

Diagnostic& DiagnosticEngine::error(SourceLoc loc, std::string message) {
  ++error_count_;
  Diagnostic& d = diagnostics_.emplace_back();
  d.loc = loc;
  d.message = std::move(message);
  return d;
}

Diagnostic& DiagnosticEngine::warning(SourceLoc loc, std::string message) {
  Diagnostic& d = diagnostics_.emplace_back();
  d.severity = Severity::Warning;
  d.loc = loc;
  d.message = std::move(message);
  return d;
}

void DiagnosticEngine::report(Diagnostic d) {
  if (d.severity == Severity::Error) ++error_count_;
  diagnostics_.push_back(std::move(d));
}

void DiagnosticEngine::clear() {
  diagnostics_.clear();
  error_count_ = 0;
}

namespace {

const char* severity_name(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "?";
}

void print_one(std::ostream& os, const SourceManager& sources, Severity severity, SourceLoc loc,
               const std::string& message) {
  if (loc.valid()) os << sources.name(loc.file) << ":" << loc.line << ":" << loc.col << ": ";
  os << severity_name(severity) << ": " << message << "\n";
  if (!loc.valid()) return;
  std::string_view text = sources.line(loc.file, loc.line);
  if (text.empty()) return;
  // Tabs become single spaces so the caret lines up in any terminal.
  std::string shown(text);
  for (char& c : shown)
    if (c == '\t') c = ' ';
  os << "  " << shown << "\n  ";
  for (uint32_t i = 1; i < loc.col && i <= shown.size(); ++i) os << ' ';
  os << "^\n";
}

} // namespace

void DiagnosticEngine::print(std::ostream& os, const Diagnostic& d) const {
  print_one(os, *sources_, d.severity, d.loc, d.message);
  for (const Diagnostic::Note& n : d.notes) print_one(os, *sources_, Severity::Note, n.loc, n.message);
}

void DiagnosticEngine::print(std::ostream& os) const {
  for (const Diagnostic& d : diagnostics_) print(os, d);
}

} // namespace dsc
