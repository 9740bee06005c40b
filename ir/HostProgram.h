#pragma once
// The host level: what `lower_host` makes of an entry `fn` once legalize and schedule have
// run, and plan_memory then completes with the arena's layout. It is a structured program over
// buffers and int64 symbols (steps, and `if` steps holding two lists of steps) that backends
// compile to one host function (runtime/HostABI.h); nothing in it is interpreted at run time.
//
// Execution order: check every input (dtype, rank), bind symbols and check repeated or
// constant dims (`dims`), check the `checks` (where clauses, then run-time shape facts over
// the inputs' symbols) in order, allocate the arena (`arena_bytes`) and the outputs whose shapes the inputs fix, then
// run `steps` in order. An output whose shape has a run-time symbol is allocated by the copy
// step that writes it, once the symbol is bound.
//
// Run-time symbols (`runtime_symbols`) are dims the inputs do not fix: nonzero's count, the dim
// of an `if` whose branches disagree, a loop's var and trip count. A Bind or Loop step gives
// one its value. Every buffer's size, and
// so the arena, is planned at the symbol's upper bound, an expression over the inputs' symbols
// (and earlier run-time symbols), so that nothing is allocated while steps run.

#include <functional>
#include <string>
#include <vector>

#include "ir/Module.h"
#include "ir/Type.h"
#include "symbolic/Expr.h"

namespace dsc::ir {

// One dim of one input, visited in parameter order then axis order. When `binds` is
// non-empty the dim defines that symbol (its first appearance); otherwise the input's dim must
// equal `expected` (evaluated with the symbols bound so far).
struct HostDim {
  int param = 0;
  int axis = 0;
  std::string binds;
  symbolic::Expr expected; // when binds is empty
};

// A predicate over bound symbols that must hold, else the call fails with
// "<what> violated: S = 600 (<location>)" listing `symbols` (the predicate's free symbols).
struct HostCheck {
  symbolic::Expr predicate;
  std::string what;     // "where S <= 512", "matmul inner dims: K == K2"
  std::string location; // "bert_layer.dsc:5:28", or empty
  std::vector<std::string> symbols;
};

// A tensor the program touches.
struct HostBuffer {
  enum class Storage : uint8_t {
    Param,  // input `index`
    Arena,  // bytes [offset, offset + size) of the arena (offset set by plan_memory)
    Output, // output `index`, allocated by dsc_rt_output
    Alias,  // the same memory as buffer `index` (a reshape), same byte size
  };
  std::string name; // the graph value it holds (for printing and errors)
  DType dtype = DType::F32;
  std::vector<symbolic::Expr> shape;
  Storage storage = Storage::Arena;
  int index = 0;                 // Param/Output: which one; Alias: the buffer id it aliases
  // Alias: the value of an update_slice written in place (passes/legalize/InPlaceUpdates.h):
  // the memory of buffer `index`, into which a Copy step has written the update. Returned
  // when its root is a parameter, it is that parameter (the manifest's updates_param).
  bool updated_in_place = false;
  symbolic::Expr offset;         // Arena: byte offset, a multiple of 64
};

struct HostStep {
  enum class Kind : uint8_t {
    Kernel,  // call prim `callee` on `buffers` (its inputs then outputs) and `symbols`
    Library, // call library routine `callee` (ir/LibraryRoutines.def) on `buffers` and `ints`
    Copy,    // memcpy buffers[0] -> buffers[1] (buffers[1]'s byte size); with four `ints`
             // (rows, row, pitch, offset: elements), an update written in place: `rows`
             // blocks of `row` elements, read one after another from buffers[0], written
             // `pitch` elements apart into buffers[1] from element `offset` on
    If,      // run `then_steps` when the bool[] buffers[0] is true (or, with no buffer, when
             // the shape predicate ints[0] holds: a guarded fusion), else `else_steps`
    Bind,    // run-time symbol `callee` := the i64[] or i32[] buffers[0] (nonzero's count),
             // or ints[0] when there is no buffer; checked to be in [0, its upper bound]
    Loop,    // for run-time symbol `callee` := ints[0], ints[0] + 1, ... while < ints[1]: run
             // `cond_steps`, stop when the bool[] buffers[0] (when there is one) is false,
             // then run `body_steps`. After the loop `callee` holds where it stopped.
    Check,   // fail the call unless the predicate ints[0] holds, as a HostCheck described by
             // `callee` (its `what`): a run-time shape fact over run-time symbols, checked
             // once they are bound (inside a loop, on every iteration)
  };
  Kind kind = Kind::Kernel;
  std::string callee;                 // Kernel: the PrimFunc's name; Library: its symbol;
                                      // Bind: the symbol
  std::vector<int> buffers;           // HostBuffer ids
  // Kernel: values of prim_signature_symbols(callee), in order.
  // Library: the routine's scalar arguments (its scalar_args).
  std::vector<symbolic::Expr> ints;
  // Library with an epilogue (ir/LibraryRoutine.h): the prim the routine runs on each finished
  // block of rows, and the values of its symbols (its row count's: all the rows; its first
  // row's, when it has one: 0). `buffers` are then the operands, the epilogue's inputs, and the
  // result.
  std::string epilogue;
  std::vector<symbolic::Expr> epilogue_ints;
  std::string epilogue_first_row; // the epilogue's symbol for a block's first row, or empty
  std::vector<HostStep> then_steps, else_steps; // If
  std::vector<HostStep> cond_steps, body_steps; // Loop
  std::string location;                         // If, Bind, Loop, Check: "model.dsc:3:9"
};

// A dim bound while steps run (see the top of this file).
struct RuntimeSymbol {
  std::string name;
  symbolic::Expr upper_bound; // over the inputs' symbols and earlier run-time symbols
  std::string what;           // "the count of nonzero", "dim 0 of the if's result"
};

struct HostProgram {
  std::string name;                 // the entry fn's name
  std::vector<Buffer> params;       // name, dtype, declared shape (symbols bound by `dims`)
  std::vector<HostDim> dims;
  std::vector<HostCheck> checks;
  std::vector<std::string> where_clauses; // the fn's `where` clauses as text, for the manifest
  std::vector<RuntimeSymbol> runtime_symbols;
  std::vector<HostBuffer> buffers;  // ids are indices; every param and output has one
  std::vector<int> outputs;         // buffer ids of the results, in return order
  // Set by plan_memory (undefined before it runs):
  symbolic::Expr arena_bytes;       // total arena size
  symbolic::Expr peak_bytes;        // the largest sum of live intermediates (for --stats)
  int arena_blocks = 0;             // distinct blocks of the arena
  int reused_buffers = 0;           // buffers placed in a block an earlier buffer used
  bool memory_planned() const { return arena_bytes.defined(); }
  std::vector<HostStep> steps;
};

// Readable text for `--print-after=lower_host` and golden tests.
std::string to_string(const HostProgram& p);

// Calls `visit` on every step of `steps` in program order, an If before its then-steps and
// those before its else-steps, a Loop before its cond-steps and those before its body-steps,
// with its position in that order.
void for_each_step(const std::vector<HostStep>& steps,
                   const std::function<void(const HostStep&, int)>& visit);

// How many positions for_each_step gives `s` and the steps inside it.
int step_count(const HostStep& s);

// The run-time symbol `name`, or null.
const RuntimeSymbol* find_runtime_symbol(const HostProgram& p, const std::string& name);

// The buffer whose memory buffer `id` is (through its chain of aliases).
int alias_root(const HostProgram& p, int id);

// Whether a dim of `shape` names a run-time symbol (its value is known only once a Bind ran).
bool has_runtime_dims(const HostProgram& p, const std::vector<symbolic::Expr>& shape);

// `e` with every run-time symbol replaced by its upper bound (repeatedly, for bounds that use
// earlier run-time symbols): a value no smaller than `e` for the sizes lower_host makes, whose
// dims only grow with their symbols.
symbolic::Expr at_upper_bounds(const HostProgram& p, const symbolic::Expr& e);

// The symbols a prim's kernel takes, in order: the distinct free symbols of its buffers'
// dims (inputs and outputs) and of its where clause, sorted by name.
std::vector<std::string> prim_signature_symbols(const PrimFunc& p);

} // namespace dsc::ir
