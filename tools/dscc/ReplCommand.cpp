// dscc repl [FILE.dsc]: libedit line editing and history on a terminal; plain lines from a
// pipe, so transcripts can be tested.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <editline/readline.h>

#include "tools/dscc/Command.h"
#include "tools/dscc/ReplSession.h"

namespace dsc::dscc {

int run_repl(const Args& args) {
  std::string file;
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << "usage: dscc repl [FILE.dsc]\n\n" << ReplSession::help();
      return 0;
    }
    if (!file.empty() || (a.size() > 1 && a[0] == '-')) {
      std::cerr << "dscc repl: error: unexpected argument '" << a << "'\n";
      return 1;
    }
    file = a;
  }
  ReplSession session;
  if (!file.empty()) std::cout << session.load(file);

  bool interactive = isatty(STDIN_FILENO);
  std::string history;
  if (interactive) {
    std::cout << "dsc repl: shapes are inferred as you type. :help lists the commands.\n";
    if (const char* home = std::getenv("HOME")) history = std::string(home) + "/.dsc_history";
    using_history();
    if (!history.empty()) read_history(history.c_str());
  }
  while (true) {
    std::string line;
    if (interactive) {
      char* raw = readline("dsc> ");
      if (!raw) break;
      line = raw;
      std::free(raw);
      if (!line.empty()) add_history(line.c_str());
    } else if (!std::getline(std::cin, line)) {
      break;
    }
    bool quit = false;
    std::cout << session.handle(line, &quit) << std::flush;
    if (quit) break;
  }
  if (interactive && !history.empty()) write_history(history.c_str());
  return 0;
}

} // namespace dsc::dscc
