// Golden tests of the simplifier's canonical printed forms, read from canonical_forms.txt:
//   INPUT => EXPECTED
//   ASSUMPTIONS |- INPUT => EXPECTED
// INPUT is parsed and simplified under Facts holding ASSUMPTIONS (a predicate), and the printed
// result must equal EXPECTED character for character. EXPECTED must also be a fixed point: it
// parses and simplifies back to the same text, so every golden form is itself canonical.
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "symbolic/Facts.h"
#include "symbolic/Parser.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"
#include "tests/unit/SourceDir.h"

namespace dsc::symbolic {
namespace {

constexpr size_t kMinimumCases = 80;

std::string data_path() {
  return testing::source_dir() + "/tests/unit/symbolic/canonical_forms.txt";
}

std::string_view trim(std::string_view s) {
  size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

struct Case {
  int line = 0;
  std::string assumptions; // empty when none
  std::string input;
  std::string expected;
};

// Reads every case; a malformed line is a test failure that names it.
std::vector<Case> read_cases(const std::string& path) {
  std::vector<Case> cases;
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot open " << path;
    return cases;
  }
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    std::string_view s = trim(text);
    if (s.empty() || s.front() == '#') continue;
    size_t arrow = s.find("=>");
    if (arrow == std::string_view::npos) {
      ADD_FAILURE() << path << ":" << line << ": expected `INPUT => EXPECTED`, got: " << text;
      continue;
    }
    Case c;
    c.line = line;
    c.expected = trim(s.substr(arrow + 2));
    std::string_view lhs = s.substr(0, arrow);
    if (size_t turnstile = lhs.find("|-"); turnstile != std::string_view::npos) {
      c.assumptions = trim(lhs.substr(0, turnstile));
      lhs = lhs.substr(turnstile + 2);
    }
    c.input = trim(lhs);
    cases.push_back(std::move(c));
  }
  return cases;
}

TEST(CanonicalForms, MatchGoldenFile) {
  const std::string path = data_path();
  std::vector<Case> cases = read_cases(path);
  EXPECT_GE(cases.size(), kMinimumCases) << "too few cases in " << path;

  for (const Case& c : cases) {
    std::string where = path + ":" + std::to_string(c.line);
    Facts facts;
    if (!c.assumptions.empty()) {
      ParseResult f = parse_predicate(c.assumptions);
      if (!f.ok()) {
        ADD_FAILURE() << where << ": assumptions do not parse:\n"
                      << format_parse_error(c.assumptions, f.error);
        continue;
      }
      facts.add(f.expr);
    }
    ParseResult input = parse_expr(c.input);
    if (!input.ok()) {
      ADD_FAILURE() << where << ": input does not parse:\n"
                    << format_parse_error(c.input, input.error);
      continue;
    }
    EXPECT_EQ(to_string(simplify(input.expr, facts)), c.expected) << where << ": " << c.input;

    ParseResult expected = parse_expr(c.expected);
    if (!expected.ok()) {
      ADD_FAILURE() << where << ": expected form does not parse:\n"
                    << format_parse_error(c.expected, expected.error);
      continue;
    }
    EXPECT_EQ(to_string(simplify(expected.expr, facts)), c.expected)
        << where << ": the expected form is not a fixed point of simplify";
  }
}

} // namespace
} // namespace dsc::symbolic
