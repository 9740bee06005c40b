// dscc: the dsc compiler driver.
#include <cstdio>
#include <cstring>
#include <string>

#include "backends/cuda/CudaHostDevice.h"
#include "support/LargeStack.h"
#include "tools/dscc/Command.h"

namespace {

constexpr const char* kUsage =
    R"(usage: dscc <command> [options]

commands:
  check FILE.dsc [--emit=shapes|ir|facts]
                                  parse, infer shapes and decide shape facts
  prove [--assume FACT]... FACT   decide a shape fact: prints `proved`,
                                  `disproved: A=1, B=3` (a counterexample) or `unknown`
  build FILE.dsc -o OUT.so        compile once for every shape the `where` clauses allow
  run FILE.dsc|OUT.so [--shape B=4,S=77] [--input NAME=X.npy]... [--random-weights]
                                  compile (or load) and run; write results with --output=DIR
  opt FILE.dsc [--passes=a,b,...] run passes of the pipeline and print the IR
  generate MODEL.so --weights W.safetensors --prompt-ids 1,2,3 [--max-new-tokens N]
                                  generate tokens with a decoder model's prefill and decode
  repl [FILE.dsc]                 explore shape inference interactively

Run `dscc <command> --help` for the options of one command.
)";

int run_command(const std::string& command, dsc::dscc::Args& args) {
  if (command == "prove") return dsc::dscc::run_prove(args);
  if (command == "check") return dsc::dscc::run_check(args);
  if (command == "repl") return dsc::dscc::run_repl(args);
  if (command == "build") return dsc::dscc::run_build(args);
  if (command == "run") return dsc::dscc::run_run(args);
  if (command == "opt") return dsc::dscc::run_opt(args);
  if (command == "generate") return dsc::dscc::run_generate(args);
  std::fprintf(stderr, "dscc: error: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "--version") {
    std::puts("dscc 0.1.0");
    return 0;
  }
  dsc::dscc::Args args(argv + 2, argv + argc);
  // The backends dscc compiles for besides the CPU.
  dsc::cuda::register_cuda_host_device();
  return dsc::on_large_stack([&] { return run_command(command, args); });
}
