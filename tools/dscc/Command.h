#pragma once
// The dscc subcommands. Each takes the arguments after its name and returns the exit code.

#include <string>
#include <vector>

namespace dsc::dscc {

using Args = std::vector<std::string>;

int run_prove(const Args& args);
int run_check(const Args& args);
int run_repl(const Args& args);
int run_build(const Args& args);
int run_run(const Args& args);
int run_opt(const Args& args);
int run_generate(const Args& args);

} // namespace dsc::dscc
