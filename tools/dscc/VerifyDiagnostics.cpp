#include "tools/dscc/VerifyDiagnostics.h"

#include <regex>
#include <sstream>
#include <vector>

namespace dsc::dscc {

namespace {

struct Expectation {
  uint32_t line;
  std::string text;
  uint32_t written_on;
  bool met = false;
};

std::vector<Expectation> expectations(const SourceManager& sources, uint32_t file) {
  std::vector<Expectation> out;
  static const std::regex pattern(R"(expected-error(@([+-])([0-9]+))?\s*\{\{(.*?)\}\})");
  std::istringstream in(sources.text(file));
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n) {
    for (std::sregex_iterator it(line.begin(), line.end(), pattern), end; it != end; ++it) {
      const std::smatch& m = *it;
      int64_t target = n;
      if (m[1].matched) {
        int64_t offset = std::stoll(m[3]);
        target += m[2] == "+" ? offset : -offset;
      }
      out.push_back({static_cast<uint32_t>(target < 1 ? 1 : target), m[4], n});
    }
  }
  return out;
}

} // namespace

bool verify_diagnostics(const SourceManager& sources, uint32_t file,
                        const DiagnosticEngine& diags, std::string* report) {
  std::vector<Expectation> expected = expectations(sources, file);
  std::ostringstream os;
  bool ok = true;
  for (const Diagnostic& d : diags.diagnostics()) {
    if (d.severity != Severity::Error) continue;
    bool matched = false;
    for (Expectation& e : expected) {
      if (e.met || d.loc.file != file || d.loc.line != e.line) continue;
      if (d.message.find(e.text) == std::string::npos) continue;
      e.met = matched = true;
      break;
    }
    if (matched) continue;
    ok = false;
    os << "unexpected error";
    if (d.loc.valid()) os << " at " << sources.name(d.loc.file) << ":" << d.loc.line << ":" << d.loc.col;
    os << ": " << d.message << "\n";
  }
  for (const Expectation& e : expected) {
    if (e.met) continue;
    ok = false;
    os << "expected error not reported at " << sources.name(file) << ":" << e.line
       << " (expectation on line " << e.written_on << "): {{" << e.text << "}}\n";
  }
  *report = os.str();
  return ok;
}

} // namespace dsc::dscc
