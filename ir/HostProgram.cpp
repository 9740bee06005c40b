#include "ir/HostProgram.h"

#include <map>
#include <set>
#include <sstream>

#include "ir/OpRegistry.h"
#include "symbolic/Eval.h"
#include "symbolic/Simplify.h"
#include "symbolic/Printer.h"

namespace dsc::ir {

namespace {

std::string dims_text(const std::vector<symbolic::Expr>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += symbolic::to_string(shape[i]);
  }
  return out + "]";
}

const char* storage_name(HostBuffer::Storage s) {
  switch (s) {
  case HostBuffer::Storage::Param: return "param";
  case HostBuffer::Storage::Arena: return "arena";
  case HostBuffer::Storage::Output: return "output";
  case HostBuffer::Storage::Alias: return "alias";
  }
  return "?";
}

void print_steps(std::ostream& os, const std::vector<HostStep>& steps, int depth) {
  const std::string indent(static_cast<size_t>(depth) * 2, ' ');
  for (const HostStep& s : steps) {
    os << indent;
    switch (s.kind) {
    case HostStep::Kind::Kernel: os << "call " << s.callee; break;
    case HostStep::Kind::Library: os << "library " << s.callee; break;
    case HostStep::Kind::Copy: os << "copy"; break;
    case HostStep::Kind::If: os << "if"; break;
    case HostStep::Kind::Bind: os << "bind " << s.callee << " ="; break;
    case HostStep::Kind::Loop: os << "for " << s.callee << " in "; break;
    case HostStep::Kind::Check:
      os << "check " << symbolic::to_string(s.ints.at(0)) << "  # " << s.callee << "\n";
      continue;
    }
    if (s.kind == HostStep::Kind::Loop) {
      os << symbolic::to_string(s.ints.at(0)) << ".." << symbolic::to_string(s.ints.at(1))
         << " {\n";
      print_steps(os, s.cond_steps, depth + 1);
      if (!s.buffers.empty()) os << indent << "  while %" << s.buffers[0] << "\n";
      print_steps(os, s.body_steps, depth + 1);
      os << indent << "}\n";
      continue;
    }
    if (s.kind == HostStep::Kind::Bind) {
      for (int id : s.buffers) os << " %" << id;
      for (const symbolic::Expr& e : s.ints) os << " " << symbolic::to_string(e);
      os << "\n";
      continue;
    }
    os << (s.kind == HostStep::Kind::If ? " " : "(");
    for (size_t i = 0; i < s.buffers.size(); ++i) os << (i ? ", %" : "%") << s.buffers[i];
    for (size_t i = 0; i < s.ints.size(); ++i)
      os << (i || !s.buffers.empty() ? ", " : "") << symbolic::to_string(s.ints[i]);
    if (!s.epilogue.empty()) {
      os << ") epilogue " << s.epilogue << "(";
      for (size_t i = 0; i < s.epilogue_ints.size(); ++i)
        os << (i ? ", " : "") << symbolic::to_string(s.epilogue_ints[i]);
    }
    if (s.kind != HostStep::Kind::If) {
      os << ")";
      if (!s.epilogue_first_row.empty()) os << " first_row " << s.epilogue_first_row;
      os << "\n";
      continue;
    }
    os << " {\n";
    print_steps(os, s.then_steps, depth + 1);
    os << indent << "} else {\n";
    print_steps(os, s.else_steps, depth + 1);
    os << indent << "}\n";
  }
}

void visit_steps(const std::vector<HostStep>& steps,
                 const std::function<void(const HostStep&, int)>& visit, int& position) {
  for (const HostStep& s : steps) {
    visit(s, position++);
    visit_steps(s.then_steps, visit, position);
    visit_steps(s.else_steps, visit, position);
    visit_steps(s.cond_steps, visit, position);
    visit_steps(s.body_steps, visit, position);
  }
}

} // namespace

void for_each_step(const std::vector<HostStep>& steps,
                   const std::function<void(const HostStep&, int)>& visit) {
  int position = 0;
  visit_steps(steps, visit, position);
}

int step_count(const HostStep& s) {
  int n = 0;
  for_each_step({s}, [&](const HostStep&, int) { ++n; });
  return n;
}

const RuntimeSymbol* find_runtime_symbol(const HostProgram& p, const std::string& name) {
  for (const RuntimeSymbol& r : p.runtime_symbols)
    if (r.name == name) return &r;
  return nullptr;
}

int alias_root(const HostProgram& p, int id) {
  while (p.buffers[static_cast<size_t>(id)].storage == HostBuffer::Storage::Alias)
    id = p.buffers[static_cast<size_t>(id)].index;
  return id;
}

bool has_runtime_dims(const HostProgram& p, const std::vector<symbolic::Expr>& shape) {
  for (const symbolic::Expr& d : shape)
    for (const std::string& s : symbolic::free_symbols(d))
      if (find_runtime_symbol(p, s)) return true;
  return false;
}

symbolic::Expr at_upper_bounds(const HostProgram& p, const symbolic::Expr& e) {
  if (!e.defined() || p.runtime_symbols.empty()) return e;
  std::map<std::string, symbolic::Expr> bounds;
  for (const RuntimeSymbol& r : p.runtime_symbols) bounds[r.name] = r.upper_bound;
  symbolic::Expr out = e;
  // Each round removes the latest run-time symbols; bounds only name earlier ones.
  for (size_t round = 0; round <= p.runtime_symbols.size(); ++round) {
    bool any = false;
    for (const std::string& s : symbolic::free_symbols(out)) any = any || bounds.count(s);
    if (!any) break;
    out = substitute(out, bounds);
  }
  return symbolic::simplify(out);
}

std::vector<std::string> prim_signature_symbols(const PrimFunc& p) {
  std::set<std::string> names;
  auto add = [&](const std::vector<Buffer>& buffers) {
    for (const Buffer& b : buffers)
      for (const symbolic::Expr& d : b.shape)
        for (const std::string& s : symbolic::free_symbols(d)) names.insert(s);
  };
  add(p.inputs);
  add(p.outputs);
  for (const WhereClause& w : p.where)
    for (const std::string& s : symbolic::free_symbols(w.predicate)) names.insert(s);
  return {names.begin(), names.end()};
}

std::string to_string(const HostProgram& p) {
  std::ostringstream os;
  os << "host " << p.name << "(";
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (i) os << ", ";
    os << p.params[i].name << ": " << dtype_name(p.params[i].dtype) << dims_text(p.params[i].shape);
  }
  os << ") {\n";
  for (const HostDim& d : p.dims) {
    os << "  dim " << p.params[d.param].name << "." << d.axis;
    if (!d.binds.empty()) os << " binds " << d.binds << "\n";
    else os << " == " << symbolic::to_string(d.expected) << "\n";
  }
  for (const RuntimeSymbol& r : p.runtime_symbols)
    os << "  runtime " << r.name << " <= " << symbolic::to_string(r.upper_bound) << "  # "
       << r.what << "\n";
  for (const HostCheck& c : p.checks) {
    os << "  check " << symbolic::to_string(c.predicate) << "  # " << c.what;
    if (!c.location.empty()) os << " (" << c.location << ")";
    os << "\n";
  }
  if (p.memory_planned())
    os << "  arena " << symbolic::to_string(p.arena_bytes) << " bytes in " << p.arena_blocks
       << " blocks (" << p.reused_buffers << " reuses), peak " << symbolic::to_string(p.peak_bytes)
       << "\n";
  else
    os << "  arena not planned\n";
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const HostBuffer& b = p.buffers[i];
    os << "  buffer %" << i << " " << b.name << ": " << dtype_name(b.dtype) << dims_text(b.shape)
       << " " << storage_name(b.storage);
    switch (b.storage) {
    case HostBuffer::Storage::Param:
    case HostBuffer::Storage::Output: os << " " << b.index; break;
    case HostBuffer::Storage::Alias:
      os << " %" << b.index << (b.updated_in_place ? " updated in place" : "");
      break;
    case HostBuffer::Storage::Arena:
      if (b.offset.defined()) os << " +" << symbolic::to_string(b.offset);
      break;
    }
    os << "\n";
  }
  print_steps(os, p.steps, 1);
  os << "  return";
  for (size_t i = 0; i < p.outputs.size(); ++i) os << (i ? ", %" : " %") << p.outputs[i];
  os << "\n}\n";
  return os.str();
}

} // namespace dsc::ir
