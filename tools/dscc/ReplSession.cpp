#include "tools/dscc/ReplSession.h"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include "ir/Printer.h"
#include "passes/IRUtil.h"
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
  x: f32[B, 768]          declare a parameter (symbols in its type are bound here);
                          `let x: f32[B, 768]` does the same
  where S <= 512          add a where clause
  let y = matmul(x, w)    bind a value and show its type
  :type EXPR              show the type of an expression
  :type NAME              show a function's signature and where clauses (layer, nn.softmax)
  :facts                  list the shape facts so far: proved, assumed or checked at run time
  :fusion [NAME]          how NAME's ops (default: the session's) become kernels, and why
  :prove FACT             prove a shape fact under the where clauses
  :load FILE              load a .dsc file; its functions can then be called
  :ir                     print the session as .dsc IR
  :reset                  forget parameters, where clauses and bindings
  :help                   this text
  :quit                   leave (also Ctrl-D)
)";
}

ReplSession::Entry ReplSession::typed(std::string text, int32_t offset) const {
  return Entry{std::move(text), static_cast<uint32_t>(typed_.size()), offset};
}

std::string ReplSession::source(const std::vector<Entry>& params, const std::vector<Entry>& wheres,
                                const std::vector<Entry>& lets,
                                std::vector<Origin>* origins) const {
  std::vector<std::string> lines;
  origins->clear();
  auto add = [&](std::string line, Origin origin) {
    lines.push_back(std::move(line));
    origins->push_back(origin);
  };
  // An entry on a line of its own after `prefix`.
  auto add_entry = [&](const std::string& prefix, const Entry& e) {
    const auto shift = static_cast<int32_t>(prefix.size()) - e.offset;
    add(prefix + e.text, Origin{Origin::Kind::Typed, e.number, shift});
  };
  static const std::regex imports_nn(R"((^|\n)\s*import\s+nn\b)");
  if (!std::regex_search(loaded_text_, imports_nn)) add("import nn", {});
  std::istringstream loaded(loaded_text_);
  uint32_t number = 0;
  for (std::string line; std::getline(loaded, line);)
    add(line, Origin{Origin::Kind::Loaded, ++number, 0});
  add("", {});
  const std::string head = std::string("fn ") + kSessionFunction + "(";
  if (params.empty()) add(head, {});
  for (size_t i = 0; i < params.size(); ++i) {
    if (i) lines.back() += ",";
    add_entry(i ? "    " : head, params[i]);
  }
  lines.back() += ")";
  for (size_t i = 0; i < wheres.size(); ++i) {
    if (i) lines.back() += ",";
    add_entry(i ? "  " : "  where ", wheres[i]);
  }
  add("{", {});
  for (const Entry& l : lets)
    add_entry("  ", l);
  std::string result = "0.0";
  if (!lets.empty())
    result = let_names(lets.back().text).back();
  else if (!params.empty())
    result = param_name(params.front().text);
  add("  return " + result, {});
  add("}", {});
  std::string text;
  for (const std::string& line : lines)
    text += line + "\n";
  return text;
}

// Locations in the checked source moved to where the user knows them (ReplSession::Origin):
// typed lines into a buffer `<repl>` of every line typed, loaded lines into the loaded file,
// stdlib modules' lines left as they are, the synthesized function's own text to nowhere.
class ReplSession::LocationMap {
public:
  LocationMap(const SourceManager& from, uint32_t file, const std::vector<Origin>& origins,
              const std::vector<std::string>& typed, const std::string& loaded_name,
              const std::string& loaded_text)
      : from_(from), file_(file), origins_(origins) {
    std::string typed_text;
    for (const std::string& line : typed)
      typed_text += line + "\n";
    typed_file_ = shown_.add("<repl>", typed_text);
    loaded_file_ = shown_.add(loaded_name, loaded_text);
  }

  const SourceManager& sources() const { return shown_; }
  uint32_t typed_file() const { return typed_file_; }

  SourceLoc place(SourceLoc loc) {
    if (!loc.valid()) return loc;
    if (loc.file != file_) {
      auto [it, added] = other_files_.emplace(loc.file, 0);
      if (added) it->second = shown_.add(from_.name(loc.file), from_.text(loc.file));
      return SourceLoc{it->second, loc.line, loc.col};
    }
    if (loc.line > origins_.size()) return SourceLoc{};
    const Origin& o = origins_[loc.line - 1];
    switch (o.kind) {
    case Origin::Kind::Typed: {
      const int64_t col = std::max<int64_t>(1, int64_t{loc.col} - o.shift);
      return SourceLoc{typed_file_, o.line, static_cast<uint32_t>(col)};
    }
    case Origin::Kind::Loaded:
      return SourceLoc{loaded_file_, o.line, loc.col};
    case Origin::Kind::None:
      break;
    }
    return SourceLoc{};
  }

private:
  const SourceManager& from_;
  uint32_t file_;
  const std::vector<Origin>& origins_;
  SourceManager shown_;
  uint32_t typed_file_ = 0, loaded_file_ = 0;
  std::map<uint32_t, uint32_t> other_files_;
};

std::string ReplSession::show(const DiagnosticEngine& diags, uint32_t file,
                              const std::vector<Origin>& origins, bool only_current) const {
  LocationMap map(diags.sources(), file, origins, typed_, loaded_name_, loaded_text_);
  DiagnosticEngine out(map.sources());
  for (Diagnostic d : diags.diagnostics()) {
    d.loc = map.place(d.loc);
    if (only_current && !(d.loc.file == map.typed_file() && d.loc.line == typed_.size())) continue;
    for (Diagnostic::Note& n : d.notes)
      n.loc = map.place(n.loc);
    out.report(std::move(d));
  }
  std::ostringstream os;
  out.print(os);
  return os.str();
}

ReplSession::Attempt ReplSession::check(const std::vector<Entry>& params,
                                        const std::vector<Entry>& wheres,
                                        const std::vector<Entry>& lets, size_t report_from,
                                        std::string* report, std::string* ir_text,
                                        std::string* facts_text, std::string* signature_of,
                                        std::string* fusion_of) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::vector<Origin> origins;
  uint32_t file = sources.add("<repl>", source(params, wheres, lets, &origins));
  std::optional<Checked> checked = check_buffer(sources, file, diags, prover_);
  Attempt a;
  if (!checked) {
    a.output = show(diags, file, origins, false);
    return a;
  }
  a.ok = true;
  a.output = show(diags, file, origins, true);
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
  if (facts_text) {
    LocationMap map(sources, file, origins, typed_, loaded_name_, loaded_text_);
    for (ir::Module::Decl& d : checked->module.decls) {
      if (!d.fn) continue;
      std::vector<ir::ShapeFact> facts = d.fn->facts;
      for (ir::ShapeFact& fact : facts)
        fact.loc = map.place(fact.loc);
      d.fn = passes::rebuild_function(*d.fn, d.fn->ret_type, d.fn->body, std::move(facts));
    }
    *facts_text = format_facts(checked->module, map.sources());
  }
  if (fusion_of) {
    // How the function's ops become kernels, at the places the user knows.
    const std::string name = fusion_of->empty() ? kSessionFunction : *fusion_of;
    DiagnosticEngine fusion_diags(sources);
    std::optional<passes::FusionLog> log = explain_fusion(checked->module, fusion_diags, prover_);
    LocationMap map(sources, file, origins, typed_, loaded_name_, loaded_text_);
    std::ostringstream os;
    if (!log) {
      os << show(fusion_diags, file, origins, false);
    } else {
      for (passes::FusionDecision& d : log->decisions)
        for (passes::FusedOp& op : d.ops)
          op.loc = map.place(op.loc);
      log->print(os, map.sources(), name);
      if (os.str().empty())
        os << "error: no function '" << name
           << "' with known dims to compile (:type NAME shows a function's signature)\n";
    }
    *fusion_of = os.str();
  }
  if (signature_of) {
    // A function of the loaded module or of an imported one: its header as printed (the
    // signature, with the where clauses), without the body.
    const std::string& name = *signature_of;
    Ref<ir::Function> f =
        name == kSessionFunction ? Ref<ir::Function>() : checked->module.function(name);
    if (!f) f = checked->module.imported_function(name);
    std::string header;
    if (f) {
      // print_function ends the header with " {" or, after where clauses, "\n{".
      header = ir::print_function(*f);
      header = header.substr(0, header.find('{'));
      while (!header.empty() && (header.back() == ' ' || header.back() == '\n'))
        header.pop_back();
      header += "\n";
      // An imported function is shown by the name it was asked by (`fn nn.softmax(...)`).
      const std::string own = "fn " + f->name + "(";
      if (name != f->name && header.rfind(own, 0) == 0)
        header = "fn " + name + "(" + header.substr(own.size());
    }
    *signature_of = header;
  }
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
  typed_.push_back(line);
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
    for (const Entry& w : wheres_) {
      symbolic::ParseResult r = symbolic::parse_predicate(w.text);
      if (r.ok()) facts.add(r.expr);
    }
    return symbolic::format_result(prover_.prove(goal.expr, facts)) + "\n";
  }
  if (starts_with(line, ":fusion")) {
    std::string fusion = trim(line.substr(7));
    Attempt a =
        check(params_, wheres_, lets_, lets_.size(), nullptr, nullptr, nullptr, nullptr, &fusion);
    return a.ok ? fusion : a.output;
  }
  if (starts_with(line, ":type")) {
    const size_t at = line.find_first_not_of(" \t", 5);
    if (at == std::string::npos) return "error: :type needs an expression\n";
    return type_of(line.substr(at), at);
  }
  if (line[0] == ':') return "error: unknown command '" + line + "'; :help lists them\n";
  if (starts_with(line, "where ")) {
    std::vector<Entry> wheres = wheres_;
    const size_t at = line.find_first_not_of(" \t", 6);
    wheres.push_back(typed(line.substr(at), static_cast<int32_t>(at)));
    Attempt a = check(params_, wheres, lets_, lets_.size(), nullptr);
    if (!a.ok) return a.output;
    wheres_ = std::move(wheres);
    return a.output;
  }
  // `let x: f32[B, 768]` (no value) is how one might guess to declare a value: it declares
  // the parameter `x: f32[B, 768]`.
  static const std::regex let_declaration(R"(^let\s+[A-Za-z_][A-Za-z0-9_]*\s*:[^=]*$)");
  if (std::regex_search(line, let_declaration)) {
    const size_t at = line.find_first_not_of(" \t", 3);
    return declare(typed(line.substr(at), static_cast<int32_t>(at)));
  }
  if (starts_with(line, "let ") || starts_with(line, "let\t")) {
    std::vector<Entry> lets = lets_;
    lets.push_back(typed(line));
    std::string report;
    Attempt a = check(params_, wheres_, lets, lets_.size(), &report);
    if (!a.ok) return a.output;
    lets_ = std::move(lets);
    return a.output + report;
  }
  static const std::regex param(R"(^[A-Za-z_][A-Za-z0-9_]*\s*:)");
  if (std::regex_search(line, param)) return declare(typed(line));
  return type_of(line, 0);
}

std::string ReplSession::declare(Entry param) {
  std::vector<Entry> params = params_;
  params.push_back(std::move(param));
  Attempt a = check(params, wheres_, lets_, lets_.size(), nullptr);
  if (!a.ok) return a.output;
  params_ = std::move(params);
  return a.output;
}

std::string ReplSession::type_of(const std::string& expr, size_t at) {
  static const std::regex name(R"(^[A-Za-z_][A-Za-z0-9_.]*$)");
  if (std::regex_search(expr, name)) {
    // A function of the loaded module or of nn: its signature. Values shadow functions.
    bool is_value = false;
    for (const Entry& p : params_)
      is_value |= param_name(p.text) == expr;
    for (const Entry& l : lets_)
      for (const std::string& n : let_names(l.text))
        is_value |= n == expr;
    std::string signature = expr;
    if (!is_value &&
        check(params_, wheres_, lets_, lets_.size(), nullptr, nullptr, nullptr, &signature).ok &&
        !signature.empty())
      return signature;
  }
  const std::string prefix = "let repl_value = ";
  std::vector<Entry> lets = lets_;
  lets.push_back(
      typed(prefix + expr, static_cast<int32_t>(at) - static_cast<int32_t>(prefix.size())));
  std::string report;
  Attempt a = check(params_, wheres_, lets, lets_.size(), &report);
  if (!a.ok) return a.output;
  size_t colon = report.find(':');
  return a.output + (colon == std::string::npos ? report : expr + report.substr(colon));
}

} // namespace dsc::dscc
