#include "backends/cuda/CudaSource.h"
#include "backends/cuda/CudaPrelude.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "ir/Combiner.h"
#include "ir/Functor.h"
#include "ir/HostProgram.h"
#include "ir/Intrinsics.h"
#include "ir/OpRegistry.h"
#include "ir/Target.h"
#include "symbolic/Eval.h"
#include "symbolic/Simplify.h"

namespace dsc::cuda {

namespace {

namespace sym = symbolic;
using ir::BinaryOp;
using ir::DType;
using ir::ForKind;
using ir::PrimExpr;
using ir::Stmt;

constexpr int64_t kMaxThreads = ir::kGpuThreadsPerBlock;

// A row kernel keeps each thread's share of the row in registers while the row has at most
// kRowRegisters elements per thread: the loops over the row unroll that many times. Measured on
// an H200 (bench/gpu/README.md): 16 and 32 were slower than 8 (32 by 2 to 5 times), the arrays
// no longer fitting the registers.
constexpr int64_t kRowRegisters = 8;
// Rows per block when a warp takes a row (kMaxThreads / 32).
constexpr int64_t kWarpRowsPerBlock = kMaxThreads / 32;

// The functions a CUDA C spelling of ir/Intrinsics.def calls ("tanhf($0)": tanhf).
void add_called_functions(std::string_view spelling, std::set<std::string>& out) {
  auto ident_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < spelling.size();) {
    if (!ident_char(spelling[i]) || std::isdigit(static_cast<unsigned char>(spelling[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < spelling.size() && ident_char(spelling[end]))
      ++end;
    if (end < spelling.size() && spelling[end] == '(') out.emplace(spelling.substr(i, end - i));
    i = end;
  }
}

// C++ keywords, CUDA's built-in names, and every function the intrinsics' spellings call.
const std::set<std::string>& reserved_words() {
  static const std::set<std::string> words = [] {
    // identity-lint: C and CUDA names (min, max, abs), not the ops.
    std::set<std::string> w = {
      "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "class",
      "const", "constexpr", "continue", "default", "delete", "do", "double", "else", "enum",
      "explicit", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int",
      "long", "mutable", "namespace", "new", "noexcept", "nullptr", "operator", "private",
      "protected", "public", "register", "return", "short", "signed", "sizeof", "static",
      "struct", "switch", "template", "this", "throw", "true", "try", "typedef", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "while", "threadIdx",
      "blockIdx", "blockDim", "gridDim", "warpSize", "main", "min", "max", "abs", "INFINITY",
      "NAN"};
    for (const ir::IntrinsicDef& fn : ir::all_intrinsics())
      for (const char* spelling : {fn.cuda_f32, fn.cuda_f64, fn.cuda_int})
        add_called_functions(spelling, w);
    return w;
  }();
  return words;
}

// A dsc name as a C identifier that cannot clash with C++, CUDA or the prelude.
std::string ident(const std::string& name) {
  if (reserved_words().count(name) || name.rfind("dsc_", 0) == 0 || name.rfind("__", 0) == 0 ||
      name.rfind("DSC_", 0) == 0)
    return name + "_";
  return name;
}

[[noreturn]] void unsupported(const std::string& what) { throw std::runtime_error(what); }

const char* c_type(DType d) {
  switch (d) {
  case DType::Bool:
    return "bool";
  case DType::I8:
    return "signed char";
  case DType::I32:
    return "int";
  case DType::I64:
    return "long long";
  case DType::F32:
    return "float";
  case DType::F64:
    return "double";
  case DType::F16:
  case DType::BF16:
    break;
  }
  unsupported(std::string(ir::dtype_name(d)) + " is not supported on CUDA yet");
}

// A symbolic index expression as C (long long arithmetic, floor division).
std::string c_index(const sym::Expr& e) {
  auto bin = [](const sym::Expr& x, const char* op) {
    const auto* n = static_cast<const sym::BinaryNode*>(x.get());
    return "(" + c_index(n->a) + " " + op + " " + c_index(n->b) + ")";
  };
  auto call = [](const sym::Expr& x, const char* fn) {
    const auto* n = static_cast<const sym::BinaryNode*>(x.get());
    return std::string(fn) + "(" + c_index(n->a) + ", " + c_index(n->b) + ")";
  };
  switch (e.kind()) {
  case sym::ExprKind::Const: {
    const int64_t v = e.as<sym::Const>()->value;
    if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
    return v < 0 ? "(" + std::to_string(v) + "LL)" : std::to_string(v) + "LL";
  }
  case sym::ExprKind::Sym:
    return ident(e.as<sym::Sym>()->name);
  case sym::ExprKind::Add:
    return bin(e, "+");
  case sym::ExprKind::Sub:
    return bin(e, "-");
  case sym::ExprKind::Mul:
    return bin(e, "*");
  case sym::ExprKind::FloorDiv:
    return call(e, "dsc_floordiv");
  case sym::ExprKind::FloorMod:
    return call(e, "dsc_floormod");
  case sym::ExprKind::Min:
    return call(e, "dsc_min<long long>");
  case sym::ExprKind::Max:
    return call(e, "dsc_max<long long>");
  case sym::ExprKind::BoolConst:
    return e.as<sym::BoolConst>()->value ? "true" : "false";
  case sym::ExprKind::EQ:
    return bin(e, "==");
  case sym::ExprKind::NE:
    return bin(e, "!=");
  case sym::ExprKind::LT:
    return bin(e, "<");
  case sym::ExprKind::LE:
    return bin(e, "<=");
  case sym::ExprKind::And:
    return bin(e, "&&");
  case sym::ExprKind::Or:
    return bin(e, "||");
  case sym::ExprKind::Not:
    return "(!" + c_index(e.as<sym::Not>()->a) + ")";
  }
  unsupported("an index expression of an unknown kind");
}

std::string float_literal(double v, DType d) {
  const bool f32 = d == DType::F32;
  if (std::isnan(v)) return f32 ? "DSC_NAN_F" : "DSC_NAN_D";
  if (std::isinf(v)) return std::string(v < 0 ? "(-" : "(") + (f32 ? "DSC_INF_F" : "DSC_INF_D") + ")";
  char buf[64];
  std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (f32) s += "f";
  return v < 0 ? "(" + s + ")" : s;
}

// The locals a statement assigns.
void assigned_locals(const Stmt& s, std::set<std::string>* out) {
  struct Finder : ir::IRVisitor {
    std::set<std::string>* out;

  protected:
    void visit_node(const ir::Assign* node) override {
      out->insert(node->name);
      ir::IRVisitor::visit_node(node);
    }
  } f;
  f.out = out;
  f.visit(s);
}

// The buffers a statement loads from and stores to.
void touched_buffers(const Stmt& s, std::set<std::string>* reads, std::set<std::string>* writes) {
  struct Finder : ir::IRVisitor {
    std::set<std::string>*reads, *writes;

  protected:
    void visit_node(const ir::Load* node) override {
      reads->insert(node->buffer);
      ir::IRVisitor::visit_node(node);
    }
    void visit_node(const ir::Store* node) override {
      writes->insert(node->buffer);
      ir::IRVisitor::visit_node(node);
    }
  } f;
  f.reads = reads;
  f.writes = writes;
  f.visit(s);
}

const char* combiner_functor(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "dsc_add()";
  case BinaryOp::Mul:
    return "dsc_mul()";
  case BinaryOp::Min:
    return "dsc_minimum()";
  default:
    return "dsc_maximum()";
  }
}

std::string identity(BinaryOp op, DType d) {
  const bool f = ir::is_float(d);
  const std::string t = c_type(d);
  switch (op) {
  case BinaryOp::Add:
    return "(" + t + ")0";
  case BinaryOp::Mul:
    return "(" + t + ")1";
  case BinaryOp::Min:
    if (f) return d == DType::F32 ? "DSC_INF_F" : "DSC_INF_D";
    return d == DType::Bool ? "true" : d == DType::I8 ? "(signed char)127" : d == DType::I32 ? "2147483647" : "9223372036854775807LL";
  default:
    if (f) return d == DType::F32 ? "(-DSC_INF_F)" : "(-DSC_INF_D)";
    return d == DType::Bool ? "false" : d == DType::I8 ? "(signed char)(-128)" : d == DType::I32 ? "(-2147483647 - 1)" : "(-9223372036854775807LL - 1)";
  }
}

class KernelWriter {
public:
  KernelWriter(const ir::PrimFunc& p, std::string kernel) : p_(p), kernel_(std::move(kernel)) {
    for (const std::vector<ir::Buffer>* bufs : {&p.inputs, &p.outputs})
      for (const ir::Buffer& b : *bufs) buffers_[b.name] = &b;
    symbols_ = ir::prim_signature_symbols(p);
    for (const std::string& name : symbols_)
      if (name == kResidentThreadsSymbol)
        unsupported("symbol '" + name + "' is reserved for the device's resident threads");
  }

  KernelLaunch write(std::ostringstream& os) {
    const ir::For* grid = top_block_loop();
    // Signature.
    os << "\nextern \"C\" __global__ void __launch_bounds__(" << kMaxThreads << ") " << kernel_
       << "(";
    std::vector<std::string> params;
    for (const ir::Buffer& b : p_.inputs)
      params.push_back("const " + std::string(c_type(b.dtype)) + "* __restrict__ " + ident(b.name));
    for (const ir::Buffer& b : p_.outputs)
      params.push_back(std::string(c_type(b.dtype)) + "* __restrict__ " + ident(b.name));
    for (const std::string& s : symbols_) params.push_back("long long " + ident(s));
    for (size_t i = 0; i < params.size(); ++i) os << (i ? ", " : "") << params[i];
    os << ") {\n";
    body_ = &os;
    row_ = plan_row(*grid);
    KernelLaunch launch;
    if (row_) {
      launch = row_launch(*grid, emit_row_kernel(*grid));
    } else {
      line(os, 1) << "const long long " << ident(grid->var) << " = " << c_index(grid->min)
                  << " + (long long)blockIdx.x;\n";
      emit_block_level(grid->body, 1);
      launch.grid_x = sym::simplify(grid->extent);
      launch.block_x = block_size(grid->body, grid->var);
    }
    os << "}\n";
    emit_emulator_entry(os);
    launch.kernel = kernel_;
    return launch;
  }

private:
  std::ostream& line(std::ostream& os, int depth) {
    for (int i = 0; i < depth; ++i) os << "  ";
    return os;
  }

  const ir::For* top_block_loop() const {
    Stmt s = p_.body;
    while (const ir::Seq* seq = s.as<ir::Seq>()) {
      if (seq->stmts.size() != 1) break;
      s = seq->stmts[0];
    }
    const ir::For* f = s.as<ir::For>();
    if (!f || (f->for_kind != ForKind::GpuBlockX && f->for_kind != ForKind::GpuBlockRows))
      unsupported("its body is not one block_x or block_rows loop (it is not GPU-scheduled)");
    return f;
  }

  // The block's threads: from the extent of the first thread_x loop.
  sym::Expr block_size(const Stmt& body, const std::string& grid_var) const {
    struct Finder : ir::IRVisitor {
      const ir::For* first = nullptr;

    protected:
      void visit_node(const ir::For* node) override {
        if (first) return;
        if (node->for_kind == ForKind::GpuThreadX) {
          first = node;
          return;
        }
        ir::IRVisitor::visit_node(node);
      }
    } f;
    f.visit(body);
    if (!f.first) return sym::Expr(32);
    const sym::Expr extent = sym::simplify(f.first->extent);
    std::set<std::string> allowed(symbols_.begin(), symbols_.end());
    for (const std::string& s : sym::free_symbols(extent))
      if (!allowed.count(s) || s == grid_var) return sym::Expr(kMaxThreads);
    return sym::simplify(warps_of(extent));
  }

  // clamp(roundup32(n), 32, kMaxThreads): whole warps for n threads, at most a block's.
  static sym::Expr warps_of(const sym::Expr& n) {
    return sym::min(sym::max(sym::floordiv(n + 31, 32) * 32, 32), kMaxThreads);
  }

  // ---- row kernels

  // A row kernel: the block loop is `block_rows` (the rows-per-block form of
  // passes/GpuSchedule.h), every thread loop of its body is a statement at its top level, and
  // all of them run over one range that the signature's symbols give; a `block_rows` loop that
  // is not so is emitted as a `block_x` one. Such a kernel runs each row loop unrolled kRowRegisters
  // times while the row has at most that many elements per thread, keeping each thread's
  // elements of the buffers below in registers across the loops, and as plain thread loops
  // otherwise. A buffer stays in registers when two or more row loops access it, all its
  // accesses are straight-line statements of the row loops (not under a condition or an inner
  // loop) and all at one offset, so that every element is read and written by one thread only:
  // it is loaded from memory once, at its first access if that reads it, and written to memory
  // once, by its last store.
  struct RowPlan {
    sym::Expr min, extent;                              // the row loops' range
    std::map<std::string, std::string> registers;       // buffer -> its register array
    std::map<std::string, sym::Expr> offsets;           // buffer -> offset, over kRowIndex
    std::map<std::string, const ir::For*> preload;      // buffer -> the loop that loads it first
    std::map<std::string, const ir::Store*> last_store; // buffer -> the store that writes memory
  };
  static constexpr const char* kRowIndex = "dsc_row_index";

  static void flatten_seq(const Stmt& s, std::vector<Stmt>* out) {
    if (const ir::Seq* seq = s.as<ir::Seq>()) {
      for (const Stmt& c : seq->stmts) flatten_seq(c, out);
    } else if (s.defined()) {
      out->push_back(s);
    }
  }

  std::optional<RowPlan> plan_row(const ir::For& grid) const {
    if (grid.for_kind != ForKind::GpuBlockRows) return std::nullopt;
    std::vector<Stmt> top;
    flatten_seq(grid.body, &top);
    std::vector<const ir::For*> loops;
    for (const Stmt& s : top)
      if (const ir::For* f = s.as<ir::For>(); f && f->for_kind == ForKind::GpuThreadX) loops.push_back(f);
    struct CountThreadLoops : ir::IRVisitor {
      size_t n = 0;

    protected:
      void visit_node(const ir::For* node) override {
        n += node->for_kind == ForKind::GpuThreadX;
        ir::IRVisitor::visit_node(node);
      }
    } count;
    count.visit(grid.body);
    if (loops.empty() || count.n != loops.size()) return std::nullopt;

    RowPlan plan;
    plan.min = sym::simplify(loops[0]->min);
    plan.extent = sym::simplify(loops[0]->extent);
    const std::set<std::string> allowed(symbols_.begin(), symbols_.end());
    for (const sym::Expr& e : {plan.min, plan.extent})
      for (const std::string& name : sym::free_symbols(e))
        if (!allowed.count(name) || name == grid.var) return std::nullopt;
    for (const ir::For* f : loops)
      if (!sym::simplify(f->min).same_as(plan.min) || !sym::simplify(f->extent).same_as(plan.extent))
        return std::nullopt;

    // Every access, in program order.
    struct Access {
      std::string buffer;
      const ir::For* loop;       // the row loop it is in, or null
      bool straight;             // not under a condition or an inner loop of that row loop
      sym::Expr offset;          // over kRowIndex; undefined when not symbolic
      const ir::Store* store;    // null for a load
    };
    struct Walker : ir::IRVisitor {
      const KernelWriter* writer;
      std::vector<Access> accesses;
      const ir::For* loop = nullptr;
      int nested = 0;

    protected:
      void visit_node(const ir::For* node) override {
        if (node->for_kind == ForKind::GpuThreadX && !loop) {
          loop = node;
          ir::IRVisitor::visit_node(node);
          loop = nullptr;
          return;
        }
        ++nested;
        ir::IRVisitor::visit_node(node);
        --nested;
      }
      void visit_node(const ir::IfStmt* node) override {
        ++nested;
        ir::IRVisitor::visit_node(node);
        --nested;
      }
      void visit_node(const ir::Load* node) override {
        ir::IRVisitor::visit_node(node);
        record(node->buffer, node->indices, nullptr);
      }
      void visit_node(const ir::Store* node) override {
        ir::IRVisitor::visit_node(node);
        record(node->buffer, node->indices, node);
      }
      void record(const std::string& buffer, const std::vector<PrimExpr>& indices, const ir::Store* store) {
        Access a{buffer, loop, loop && nested == 0, sym::Expr(), store};
        if (std::optional<sym::Expr> flat = writer->flat_offset(buffer, indices); flat && loop)
          a.offset = sym::simplify(ir::substitute(*flat, {{loop->var, sym::Sym::make(kRowIndex)}}));
        accesses.push_back(std::move(a));
      }
    } walker;
    walker.writer = this;
    walker.visit(grid.body);

    std::set<std::string> outputs;
    for (const ir::Buffer& b : p_.outputs) outputs.insert(b.name);
    std::map<std::string, std::vector<const Access*>> by_buffer;
    for (const Access& a : walker.accesses) by_buffer[a.buffer].push_back(&a);
    for (const auto& [name, accesses] : by_buffer) {
      bool ok = true;
      for (const Access* a : accesses)
        ok &= a->straight && a->offset.defined() && a->offset.same_as(accesses[0]->offset) &&
              (!a->store || outputs.count(name));
      std::set<const ir::For*> loops_touching;
      for (const Access* a : accesses) loops_touching.insert(a->loop);
      if (!ok || loops_touching.size() < 2) continue; // read or written by one loop: no reuse
      plan.registers[name] = "dsc_reg" + std::to_string(plan.registers.size());
      plan.offsets[name] = accesses[0]->offset;
      if (!accesses[0]->store) plan.preload[name] = accesses[0]->loop;
      for (const Access* a : accesses)
        if (a->store) plan.last_store[name] = a->store;
    }
    return plan;
  }

  // The block's rows: a row per block, or a row per warp when a warp holds the row in
  // registers (at most 32 * kRowRegisters = 256 elements) and no barrier is needed, so that the
  // threads of a row that does not exist may return at once.
  //   if (row >= rows) return;
  //   if (E <= kRowRegisters * blockDim.x) { registers } else { thread loops }
  // Returns whether the register path has a barrier.
  bool emit_row_kernel(const ir::For& grid) {
    std::ostream& os = *body_;
    const std::string row = ident(grid.var);
    line(os, 1) << "const long long " << row << " = " << c_index(grid.min)
                << " + (long long)blockIdx.x * blockDim.y + threadIdx.y;\n";
    line(os, 1) << "if (" << row << " >= " << c_index(sym::simplify(grid.min + grid.extent))
                << ") return;\n";
    line(os, 1) << "if (" << c_index(row_->extent) << " <= " << kRowRegisters
                << "LL * blockDim.x) {\n";
    for (const auto& [name, reg] : row_->registers)
      line(os, 2) << c_type(buffer(name).dtype) << " " << reg << "[" << kRowRegisters << "];\n";
    const std::map<std::string, DType> outer_locals = locals_;
    registers_ = true;
    emit_block_level(grid.body, 2);
    registers_ = false;
    const bool barrier = barriers_ > 0;
    unsynced_.clear();
    locals_ = outer_locals;
    line(os, 1) << "} else {\n";
    emit_block_level(grid.body, 2);
    line(os, 1) << "}\n";
    return barrier;
  }

  // Threads per row T = clamp(roundup32(ceildiv(E, kRowRegisters)), 32, 256), so that the row
  // fits the registers up to E = 256 * kRowRegisters = 2048; a block of kWarpRowsPerBlock rows when
  // T is 32 (and the register path has no barrier), else of one. Rows too few to keep half the
  // device's resident threads busy (2 R T < resident) get clamp(roundup32(E), 32, 256) threads
  // each instead: more threads per row where rows are the scarce parallelism.
  KernelLaunch row_launch(const ir::For& grid, bool barrier_in_registers) const {
    const sym::Expr& e = row_->extent;
    const sym::Expr packed = warps_of(sym::floordiv(e + (kRowRegisters - 1), kRowRegisters));
    const sym::Expr spread = warps_of(e);
    // 1 when 2 R T < resident, else 0.
    const sym::Expr few_rows =
        1 - sym::min(1, sym::floordiv(2 * grid.extent * packed, sym::sym(kResidentThreadsSymbol)));
    const sym::Expr per_row = packed + (spread - packed) * few_rows;
    sym::Expr rows = 1;
    if (!barrier_in_registers)
      rows = sym::max(1, kWarpRowsPerBlock - (kWarpRowsPerBlock - 1) * sym::floordiv(per_row - 1, 32));
    KernelLaunch launch;
    launch.block_x = sym::simplify(per_row);
    launch.block_y = sym::simplify(rows);
    launch.grid_x = sym::simplify(sym::floordiv(grid.extent + rows - 1, rows));
    return launch;
  }

  // A row loop in registers: unrolled, element k of each thread at min + threadIdx.x +
  // k * blockDim.x.
  void emit_register_loop(const ir::For& f, int depth) {
    std::ostream& os = *body_;
    const std::string v = ident(f.var);
    line(os, depth) << "#pragma unroll\n";
    line(os, depth) << "for (int dsc_k = 0; dsc_k < " << kRowRegisters << "; ++dsc_k) {\n";
    line(os, depth + 1) << "const long long " << v << " = " << c_index(f.min)
                        << " + (long long)threadIdx.x + (long long)dsc_k * blockDim.x;\n";
    line(os, depth + 1) << "if (" << v << " < " << c_index(sym::simplify(f.min + f.extent)) << ") {\n";
    for (const auto& [name, loop] : row_->preload)
      if (loop == &f)
        line(os, depth + 2) << row_->registers.at(name) << "[dsc_k] = " << ident(name) << "["
                            << register_offset(name, f.var) << "];\n";
    emit_thread_level(f.body, depth + 2);
    line(os, depth + 1) << "}\n";
    line(os, depth) << "}\n";
  }

  std::string register_offset(const std::string& name, const std::string& var) const {
    return c_index(sym::simplify(ir::substitute(row_->offsets.at(name), {{kRowIndex, sym::Sym::make(var)}})));
  }

  bool in_registers(const std::string& buffer) const {
    return registers_ && row_ && row_->registers.count(buffer);
  }

  const ir::Buffer& buffer(const std::string& name) const {
    auto it = buffers_.find(name);
    if (it == buffers_.end()) unsupported("buffer '" + name + "' is not a parameter (allocations are not supported on CUDA yet)");
    return *it->second;
  }

  // The row-major element offset of `indices` in buffer `name` as one simplified expression,
  // when every index is symbolic: an index the schedule unflattened (`flat // C`, `flat % C`)
  // folds back to `flat` there.
  std::optional<sym::Expr> flat_offset(const std::string& name, const std::vector<PrimExpr>& indices) const {
    const ir::Buffer& b = buffer(name);
    if (indices.size() != b.shape.size()) unsupported("buffer '" + name + "' indexed with the wrong rank");
    sym::Expr flat = 0;
    for (size_t k = 0; k < indices.size(); ++k) {
      const ir::Index* idx = indices[k].as<ir::Index>();
      if (!idx) return std::nullopt;
      flat = k == 0 ? idx->value : flat * b.shape[k] + idx->value;
    }
    return sym::simplify(flat);
  }

  // The row-major element offset of `indices` in `buffer`.
  std::string offset(const std::string& name, const std::vector<PrimExpr>& indices) {
    if (indices.empty()) return "0";
    if (std::optional<sym::Expr> flat = flat_offset(name, indices)) return c_index(*flat);
    const ir::Buffer& b = buffer(name);
    std::string s = expr(indices[0]);
    for (size_t k = 1; k < indices.size(); ++k)
      s = "(" + s + " * " + c_index(b.shape[k]) + " + " + expr(indices[k]) + ")";
    return s;
  }

  std::string local_name(const std::string& name) const {
    auto it = partials_.find(name);
    return it != partials_.end() ? it->second : ident(name);
  }

  std::string expr(const PrimExpr& e) {
    switch (e.kind()) {
    case ir::NodeKind::IntImm: {
      const auto* n = e.as<ir::IntImm>();
      if (e->dtype == DType::Bool) return n->value ? "true" : "false";
      if (e->dtype == DType::I64) return c_index(sym::Expr(n->value));
      return "((" + std::string(c_type(e->dtype)) + ")" + std::to_string(n->value) + ")";
    }
    case ir::NodeKind::FloatImm:
      return float_literal(e.as<ir::FloatImm>()->value, e->dtype);
    case ir::NodeKind::Index:
      return c_index(e.as<ir::Index>()->value);
    case ir::NodeKind::Load: {
      const auto* n = e.as<ir::Load>();
      if (in_registers(n->buffer)) return row_->registers.at(n->buffer) + "[dsc_k]";
      return ident(n->buffer) + "[" + offset(n->buffer, n->indices) + "]";
    }
    case ir::NodeKind::LocalRef:
      return local_name(e.as<ir::LocalRef>()->name);
    case ir::NodeKind::PrimBinary:
      return binary(*e.as<ir::PrimBinary>());
    case ir::NodeKind::Intrinsic:
      return intrinsic(*e.as<ir::Intrinsic>());
    case ir::NodeKind::Cast:
      return cast(*e.as<ir::Cast>());
    default:
      unsupported("an expression of an unknown kind");
    }
  }

  std::string binary(const ir::PrimBinary& e) {
    const std::string a = expr(e.a), b = expr(e.b);
    const DType d = e.a->dtype;
    const bool f = ir::is_float(d);
    const std::string t = c_type(d);
    switch (e.op) {
    case BinaryOp::Add:
      return "(" + a + " + " + b + ")";
    case BinaryOp::Sub:
      return "(" + a + " - " + b + ")";
    case BinaryOp::Mul:
      return "(" + a + " * " + b + ")";
    case BinaryOp::Div:
      if (f) return "(" + a + " / " + b + ")";
      return "((" + t + ")dsc_floordiv((long long)" + a + ", (long long)" + b + "))";
    case BinaryOp::Mod:
      if (f) unsupported("'%' on floats");
      return "((" + t + ")dsc_floormod((long long)" + a + ", (long long)" + b + "))";
    case BinaryOp::Min:
      return "dsc_min<" + t + ">(" + a + ", " + b + ")";
    case BinaryOp::Max:
      return "dsc_max<" + t + ">(" + a + ", " + b + ")";
    case BinaryOp::EQ:
      return "(" + a + " == " + b + ")";
    case BinaryOp::NE:
      return "(" + a + " != " + b + ")";
    case BinaryOp::LT:
      return "(" + a + " < " + b + ")";
    case BinaryOp::LE:
      return "(" + a + " <= " + b + ")";
    case BinaryOp::GT:
      return "(" + a + " > " + b + ")";
    case BinaryOp::GE:
      return "(" + a + " >= " + b + ")";
    case BinaryOp::And:
      return "(" + a + " && " + b + ")";
    case BinaryOp::Or:
      return "(" + a + " || " + b + ")";
    }
    unsupported("an unknown binary operator");
  }

  std::string intrinsic(const ir::Intrinsic& e) {
    const ir::IntrinsicDef* def = ir::find_intrinsic(e.name);
    if (!def || !def->pure()) unsupported("intrinsic '" + e.name + "' has no value");
    DType operand = e.args.empty() ? e.dtype : e.args.back()->dtype;
    const char* spelling = operand == DType::F32   ? def->cuda_f32
                           : operand == DType::F64 ? def->cuda_f64
                           : ir::is_float(operand) ? ""
                                                   : def->cuda_int;
    if (!spelling || !*spelling)
      unsupported("intrinsic '" + e.name + "' on " + ir::dtype_name(operand) + " has no CUDA spelling");
    std::vector<std::string> args;
    for (const PrimExpr& a : e.args) args.push_back("(" + expr(a) + ")");
    std::string out;
    for (const char* c = spelling; *c; ++c) {
      if (*c == '$' && c[1] >= '0' && c[1] <= '9') {
        size_t k = static_cast<size_t>(c[1] - '0');
        if (k >= args.size()) unsupported("intrinsic '" + e.name + "': its CUDA spelling names a missing operand");
        out += args[k];
        ++c;
      } else {
        out += *c;
      }
    }
    return "(" + out + ")";
  }

  std::string cast(const ir::Cast& e) {
    const DType from = e.value->dtype, to = e.dtype;
    const std::string v = expr(e.value);
    if (from == to) return v;
    if (to == DType::Bool) return "(" + v + " != 0)";
    if (ir::is_float(from) && !ir::is_float(to))
      return "((" + std::string(c_type(to)) + ")(long long)(" + v + "))";
    return "((" + std::string(c_type(to)) + ")(" + v + "))";
  }

  // ---- statements

  // A statement outside every thread loop (run by every thread of the block).
  void emit_block_level(const Stmt& s, int depth) {
    std::ostream& os = *body_;
    if (const ir::Seq* seq = s.as<ir::Seq>()) {
      for (const Stmt& c : seq->stmts) emit_block_level(c, depth);
      return;
    }
    std::set<std::string> reads, writes;
    touched_buffers(s, &reads, &writes);
    bool conflict = false;
    for (const std::set<std::string>* set : {&reads, &writes})
      for (const std::string& b : *set) conflict |= unsynced_.count(b) > 0;
    if (conflict && !s.as<ir::IfStmt>()) {
      line(os, depth) << "__syncthreads();\n";
      ++barriers_;
      unsynced_.clear();
    }
    if (const ir::For* f = s.as<ir::For>()) {
      if (f->for_kind == ForKind::GpuThreadX) {
        emit_thread_loop(*f, depth);
      } else if (f->for_kind == ForKind::Serial || f->for_kind == ForKind::Unrolled) {
        emit_serial_loop(*f, depth, &KernelWriter::emit_block_level);
      } else {
        unsupported(std::string("a ") + ir::for_kind_name(f->for_kind) + " loop inside the block loop");
      }
      return;
    }
    if (const ir::Store* st = s.as<ir::Store>()) {
      line(os, depth) << "if (threadIdx.x == 0) " << ident(st->buffer) << "["
                      << offset(st->buffer, st->indices) << "] = " << expr(st->value) << ";\n";
      unsynced_.insert(st->buffer);
      return;
    }
    if (const ir::IfStmt* i = s.as<ir::IfStmt>()) {
      emit_if(*i, depth, &KernelWriter::emit_block_level);
      return;
    }
    if (const ir::Evaluate* e = s.as<ir::Evaluate>()) {
      const ir::Intrinsic* in = e->value.as<ir::Intrinsic>();
      if (in && in->is(ir::IntrinsicId::sync_threads)) {
        line(os, depth) << "__syncthreads();\n";
        ++barriers_;
        unsynced_.clear();
        return;
      }
    }
    emit_scalar(s, depth);
  }

  using Emit = void (KernelWriter::*)(const Stmt&, int);

  // A serial (or unrolled) loop, its body emitted by `body`.
  void emit_serial_loop(const ir::For& f, int depth, Emit body) {
    std::ostream& os = *body_;
    if (f.for_kind == ForKind::Unrolled) line(os, depth) << "#pragma unroll\n";
    const std::string v = ident(f.var);
    line(os, depth) << "for (long long " << v << " = " << c_index(f.min) << "; " << v << " < "
                    << c_index(sym::simplify(f.min + f.extent)) << "; ++" << v << ") {\n";
    (this->*body)(f.body, depth + 1);
    line(os, depth) << "}\n";
  }

  void emit_if(const ir::IfStmt& i, int depth, Emit body) {
    std::ostream& os = *body_;
    line(os, depth) << "if (" << expr(i.cond) << ") {\n";
    (this->*body)(i.then_body, depth + 1);
    if (i.else_body.defined()) {
      line(os, depth) << "} else {\n";
      (this->*body)(i.else_body, depth + 1);
    }
    line(os, depth) << "}\n";
  }

  // Locals, assignments and evaluations: the same in and out of thread loops.
  void emit_scalar(const Stmt& s, int depth) {
    std::ostream& os = *body_;
    if (const ir::LocalDecl* d = s.as<ir::LocalDecl>()) {
      locals_[d->name] = d->dtype;
      line(os, depth) << (d->is_mutable ? "" : "const ") << c_type(d->dtype) << " " << ident(d->name)
                      << " = " << expr(d->init) << ";\n";
      return;
    }
    if (const ir::Assign* a = s.as<ir::Assign>()) {
      line(os, depth) << local_name(a->name) << " = " << expr(a->value) << ";\n";
      return;
    }
    if (const ir::Evaluate* e = s.as<ir::Evaluate>()) {
      const ir::Intrinsic* in = e->value.as<ir::Intrinsic>();
      if (in && in->is(ir::IntrinsicId::sync_threads))
        unsupported("a barrier inside a thread loop");
      line(os, depth) << "(void)" << expr(e->value) << ";\n";
      return;
    }
    if (const ir::Alloc* a = s.as<ir::Alloc>()) {
      if (a->scope == ir::MemoryScope::Global)
        unsupported("global allocation '" + a->name + "' inside a kernel");
      unsupported("allocation '" + a->name + "' (not supported on CUDA yet)");
    }
    unsupported("a statement of an unknown kind");
  }

  // for (v = min + threadIdx.x; v < min + extent; v += blockDim.x), then the combination of
  // every outer local it updates.
  void emit_thread_loop(const ir::For& f, int depth) {
    std::ostream& os = *body_;
    std::set<std::string> assigned;
    assigned_locals(f.body, &assigned);
    struct Combined {
      std::string local, partial;
      BinaryOp op;
      DType dtype;
    };
    std::vector<Combined> combined;
    for (const std::string& name : assigned) {
      auto it = locals_.find(name);
      if (it == locals_.end()) continue; // declared inside the loop
      std::optional<BinaryOp> op = ir::local_combiner(f.body, name);
      if (!op)
        unsupported("local '" + name + "' is updated across threads without an associative " +
                    "combiner (t = t + e, t * e, min or max)");
      combined.push_back({name, ident(name) + "_part", *op, it->second});
    }
    line(os, depth) << "{\n";
    for (const Combined& c : combined) {
      line(os, depth + 1) << c_type(c.dtype) << " " << c.partial << " = " << identity(c.op, c.dtype) << ";\n";
      partials_[c.local] = c.partial;
    }
    if (registers_) {
      emit_register_loop(f, depth + 1);
    } else {
      const std::string v = ident(f.var);
      line(os, depth + 1) << "for (long long " << v << " = " << c_index(f.min) << " + (long long)threadIdx.x; "
                          << v << " < " << c_index(sym::simplify(f.min + f.extent)) << "; " << v
                          << " += blockDim.x) {\n";
      emit_thread_level(f.body, depth + 2);
      line(os, depth + 1) << "}\n";
    }
    for (const Combined& c : combined) {
      partials_.erase(c.local);
      const std::string total = "dsc_block_combine(" + c.partial + ", " + combiner_functor(c.op) + ")";
      std::string update;
      switch (c.op) {
      case BinaryOp::Add:
        update = ident(c.local) + " + " + total;
        break;
      case BinaryOp::Mul:
        update = ident(c.local) + " * " + total;
        break;
      case BinaryOp::Min:
        update = "dsc_min<" + std::string(c_type(c.dtype)) + ">(" + ident(c.local) + ", " + total + ")";
        break;
      default:
        update = "dsc_max<" + std::string(c_type(c.dtype)) + ">(" + ident(c.local) + ", " + total + ")";
        break;
      }
      line(os, depth + 1) << ident(c.local) << " = " << update << ";\n";
    }
    line(os, depth) << "}\n";
    std::set<std::string> reads, writes;
    touched_buffers(f.body, &reads, &writes);
    for (const std::string& b : writes)
      if (!in_registers(b)) unsynced_.insert(b); // a buffer in registers: one thread per element
  }

  // A statement inside a thread loop (one thread's work).
  void emit_thread_level(const Stmt& s, int depth) {
    std::ostream& os = *body_;
    if (const ir::Seq* seq = s.as<ir::Seq>()) {
      for (const Stmt& c : seq->stmts) emit_thread_level(c, depth);
      return;
    }
    if (const ir::For* f = s.as<ir::For>()) {
      if (f->for_kind != ForKind::Serial && f->for_kind != ForKind::Unrolled)
        unsupported(std::string("a ") + ir::for_kind_name(f->for_kind) + " loop inside a thread loop");
      emit_serial_loop(*f, depth, &KernelWriter::emit_thread_level);
      return;
    }
    if (const ir::Store* st = s.as<ir::Store>()) {
      if (in_registers(st->buffer)) {
        const std::string reg = row_->registers.at(st->buffer) + "[dsc_k]";
        line(os, depth) << reg << " = " << expr(st->value) << ";\n";
        if (row_->last_store.at(st->buffer) == st)
          line(os, depth) << ident(st->buffer) << "[" << offset(st->buffer, st->indices) << "] = " << reg << ";\n";
        return;
      }
      line(os, depth) << ident(st->buffer) << "[" << offset(st->buffer, st->indices)
                      << "] = " << expr(st->value) << ";\n";
      return;
    }
    if (const ir::IfStmt* i = s.as<ir::IfStmt>()) {
      emit_if(*i, depth, &KernelWriter::emit_thread_level);
      return;
    }
    emit_scalar(s, depth);
  }

  void emit_emulator_entry(std::ostringstream& os) {
    os << "#ifdef DSC_CUDA_EMULATOR\nextern \"C\" void dsc_emu_" << kernel_
       << "(void* const* buffers, const int64_t* symbols) {\n  " << kernel_ << "(";
    size_t k = 0;
    std::vector<std::string> args;
    for (const ir::Buffer& b : p_.inputs)
      args.push_back("(const " + std::string(c_type(b.dtype)) + "*)buffers[" + std::to_string(k++) + "]");
    for (const ir::Buffer& b : p_.outputs)
      args.push_back("(" + std::string(c_type(b.dtype)) + "*)buffers[" + std::to_string(k++) + "]");
    for (size_t j = 0; j < symbols_.size(); ++j)
      args.push_back("(long long)symbols[" + std::to_string(j) + "]");
    for (size_t i = 0; i < args.size(); ++i) os << (i ? ", " : "") << args[i];
    os << ");\n}\n#endif\n";
  }

  const ir::PrimFunc& p_;
  std::string kernel_;
  std::map<std::string, const ir::Buffer*> buffers_;
  std::vector<std::string> symbols_;
  std::map<std::string, DType> locals_;
  std::map<std::string, std::string> partials_; // combined local -> its per-thread partial
  std::set<std::string> unsynced_;              // buffers written since the last barrier
  std::ostream* body_ = nullptr;
  std::optional<RowPlan> row_;      // set for a row kernel
  bool registers_ = false;          // emitting a row kernel's register path
  int barriers_ = 0;                // __syncthreads emitted so far
};

} // namespace

std::string kernel_name(const std::string& prim_name) {
  std::string s = "dsc_";
  for (char c : prim_name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

std::optional<CudaSource> emit_cuda_source(const ir::Module& m, std::string* error) {
  CudaSource out;
  std::ostringstream os;
  os << kCudaPrelude;
  std::set<std::string> kernels;
  for (const ir::Module::Decl& d : m.decls) {
    if (!d.prim) continue;
    const std::string name = kernel_name(d.prim->name);
    if (!kernels.insert(name).second) {
      if (error) *error = "prim '" + d.prim->name + "': its kernel name " + name + " is taken";
      return std::nullopt;
    }
    std::ostringstream kernel;
    try {
      out.launches[d.prim->name] = KernelWriter(*d.prim, name).write(kernel);
    } catch (const std::runtime_error& e) {
      if (error) *error = "prim '" + d.prim->name + "' cannot be compiled for CUDA: " + e.what();
      return std::nullopt;
    }
    os << kernel.str();
  }
  out.text = os.str();
  return out;
}

} // namespace dsc::cuda
