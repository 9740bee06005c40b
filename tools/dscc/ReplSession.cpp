#include "tools/dscc/ReplSession.h"

#include <regex>
#include <sstream>

#include "ir/Printer.h"
#include "support/File.h"
#include "symbolic/Facts.h"
#include "symbolic/Parser.h"
#include "symbolic/Simplify.h"
#include "tools/dscc/Check.h"

namespace dsc::dscc {

namespace {

constexpr const char* kSessionFunction = "repl_session";

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The names a `let` line binds: `let a, b = ...` or `let y: T = ...`.
std::vector<std::string> let_names(const std::string& line) {
  std::vector<std::string> names;
  std::smatch m;
  static const std::regex head(
      R"(^let\s+([A-Za-z_][A-Za-z0-9_]*(\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*))");
  if (!std::regex_search(line, m, head)) return names;
  std::string list = m[1];
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ','))
    names.push_back(trim(item));
  return names;
}

std::string param_name(const std::string& decl) {
  return trim(decl.substr(0, decl.find(':')));
}

} // namespace

const char* ReplSession::help() {
  return R"(Enter parameters, where clauses and let bindings; each is checked at once.
  x: f32[B, 768]          declare a parameter (symbols in its type are bound here)
  where S <= 512          add a where clause
  let y = matmul(x, w)    bind a value and show its type
  :type EXPR              show the type of an expression
  :facts                  list the shape facts so far: proved, assumed or checked at run time
  :prove FACT             prove a shape fact under the where clauses
  :load FILE              load a .dsc file; its functions can then be called
  :ir                     print the session as .dsc IR
  :reset                  forget parameters, where clauses and bindings
  :help                   this text
  :quit                   leave (also Ctrl-D)
)";
}

std::string ReplSession::source(const std::vector<std::string>& params,
                                const std::vector<std::string>& wheres,
                                const std::vector<std::string>& lets) const {
  std::ostringstream os;
  static const std::regex imports_nn(R"((^|\n)\s*import\s+nn\b)");
  if (!std::regex_search(loaded_text_, imports_nn)) os << "import nn\n";
  os << loaded_text_ << "\n";
  os << "fn " << kSessionFunction << "(";
  for (size_t i = 0; i < params.size(); ++i)
    os << (i ? ",\n    " : "") << params[i];
  os << ")\n";
  for (size_t i = 0; i < wheres.size(); ++i)
    os << (i ? ",\n  " : "  where ") << wheres[i];
  os << "\n{\n";
  for (const std::string& l : lets)
    os << "  " << l << "\n";
  std::string result = "0.0";
  if (!lets.empty())
    result = let_names(lets.back()).back();
  else if (!params.empty())
    result = param_name(params.front());
  os << "  return " << result << "\n}\n";
  return os.str();
}

ReplSession::Attempt ReplSession::check(const std::vector<std::string>& params,
                                        const std::vector<std::string>& wheres,
                                        const std::vector<std::string>& lets, size_t report_from,
                                        std::string* report, std::string* ir_text,
                                        std::string* facts_text) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.add(loaded_name_.empty() ? "<repl>" : "<repl+" + loaded_name_ + ">",
                              source(params, wheres, lets));
  std::optional<Checked> checked = check_buffer(sources, file, diags, prover_);
  Attempt a;
  if (!checked) {
    std::ostringstream os;
    diags.print(os);
    a.output = os.str();
    return a;
  }
  a.ok = true;
  Ref<ir::Function> fn = checked->module.function(kSessionFunction);
  if (report && fn) {
    // Report the bindings of the new input: those after the first report_from lets.
    std::ostringstream os;
    const ir::Block* body = fn->body.as<ir::Block>();
    size_t seen = 0;
    for (const ir::Binding& b : body->bindings) {
      if (seen++ < report_from) continue;
      for (const ir::VarRef& v : b.vars) {
        ir::Type t = v->type;
        for (symbolic::Expr& d : t.shape)
          d = symbolic::simplify(d);
        os << v->name << ": " << ir::to_string(t) << "\n";
      }
    }
    *report = os.str();
  }
  if (ir_text && fn) *ir_text = ir::print_function(*fn);
  if (facts_text) *facts_text = format_facts(checked->module, sources);
  return a;
}

std::string ReplSession::load(const std::string& path) {
  std::string error;
  std::optional<std::string> text = read_file(path, &error);
  if (!text) return "error: cannot read '" + path + "': " + error + "\n";
  std::string old_name = loaded_name_, old_text = loaded_text_;
  loaded_name_ = path;
  loaded_text_ = std::move(*text);
  Attempt a = check(params_, wheres_, lets_, lets_.size(), nullptr);
  if (!a.ok) {
    loaded_name_ = old_name;
    loaded_text_ = old_text;
    return a.output + "(not loaded)\n";
  }
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.add(path, loaded_text_);
  std::optional<Checked> checked = check_buffer(sources, file, diags, prover_);
  return "loaded " + path + "\n" + (checked ? format_shapes(checked->module) : "");
}

std::string ReplSession::handle(const std::string& raw, bool* quit) {
  std::string line = trim(raw);
  *quit = false;
  if (line.empty() || line[0] == '#') return "";
  if (line == ":quit" || line == ":q" || line == ":exit") {
    *quit = true;
    return "";
  }
  if (line == ":help" || line == ":h" || line == "?") return help();
  if (line == ":reset") {
    params_.clear();
    wheres_.clear();
    lets_.clear();
    return "";
  }
  if (starts_with(line, ":load")) {
    std::string path = trim(line.substr(5));
    if (path.empty()) return "error: :load needs a FILE\n";
    return load(path);
  }
  if (line == ":ir") {
    std::string ir_text;
    Attempt a = check(params_, wheres_, lets_, lets_.size(), nullptr, &ir_text);
    return a.ok ? ir_text : a.output;
  }
  if (line == ":facts") {
    std::string facts_text;
    Attempt a = check(params_, wheres_, lets_, lets_.size(), nullptr, nullptr, &facts_text);
    return a.ok ? facts_text : a.output;
  }
  if (starts_with(line, ":prove")) {
    std::string text = trim(line.substr(6));
    symbolic::ParseResult goal = symbolic::parse_predicate(text);
    if (!goal.ok()) return symbolic::format_parse_error(text, goal.error);
    symbolic::Facts facts;
    for (const std::string& w : wheres_) {
      symbolic::ParseResult r = symbolic::parse_predicate(w);
      if (r.ok()) facts.add(r.expr);
    }
    return symbolic::format_result(prover_.prove(goal.expr, facts)) + "\n";
  }
  if (starts_with(line, ":type")) {
    std::string expr = trim(line.substr(5));
    if (expr.empty()) return "error: :type needs an expression\n";
    std::vector<std::string> lets = lets_;
    lets.push_back("let repl_value = " + expr);
    std::string report;
    Attempt a = check(params_, wheres_, lets, lets_.size(), &report);
    if (!a.ok) return a.output;
    size_t colon = report.find(':');
    return colon == std::string::npos ? report : expr + report.substr(colon);
  }
  if (line[0] == ':') return "error: unknown command '" + line + "'; :help lists them\n";
  if (starts_with(line, "where ")) {
    std::vector<std::string> wheres = wheres_;
    wheres.push_back(trim(line.substr(6)));
    Attempt a = check(params_, wheres, lets_, lets_.size(), nullptr);
    if (!a.ok) return a.output;
    wheres_ = std::move(wheres);
    return "";
  }
  if (starts_with(line, "let ") || starts_with(line, "let\t")) {
    std::vector<std::string> lets = lets_;
    lets.push_back(line);
    std::string report;
    Attempt a = check(params_, wheres_, lets, lets_.size(), &report);
    if (!a.ok) return a.output;
    lets_ = std::move(lets);
    return report;
  }
  static const std::regex param(R"(^[A-Za-z_][A-Za-z0-9_]*\s*:)");
  if (std::regex_search(line, param)) {
    std::vector<std::string> params = params_;
    params.push_back(line);
    Attempt a = check(params, wheres_, lets_, lets_.size(), nullptr);
    if (!a.ok) return a.output;
    params_ = std::move(params);
    return "";
  }
  // A bare expression: show its type.
  bool ignored = false;
  return handle(":type " + line, &ignored);
}

} // namespace dsc::dscc
