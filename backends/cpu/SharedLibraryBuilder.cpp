#include "backends/cpu/SharedLibraryBuilder.h"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dsc::cpu {

namespace {

void set_error(std::string* error, const std::string& message) {
  if (error) *error = message;
}

// Closes a file descriptor on every path out of the scope.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct SpawnActions {
  posix_spawn_file_actions_t actions;
  SpawnActions() { posix_spawn_file_actions_init(&actions); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
};

} // namespace

bool write_object_file(llvm::Module& module, llvm::TargetMachine& tm, const std::string& path,
                       std::string* error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    set_error(error, "cannot write " + path + ": " + ec.message());
    return false;
  }
  llvm::legacy::PassManager passes;
  if (tm.addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    set_error(error, "LLVM cannot emit object files for " + tm.getTargetTriple().str());
    return false;
  }
  passes.run(module);
  os.flush();
  if (os.has_error()) {
    set_error(error, "cannot write " + path + ": " + os.error().message());
    os.clear_error();
    return false;
  }
  return true;
}

int run_process(const std::vector<std::string>& argv, std::string* output) {
  output->clear();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    *output = std::string("cannot create a pipe: ") + std::strerror(errno);
    return -1;
  }
  Fd read_end{fds[0]};
  Fd write_end{fds[1]};

  SpawnActions spawn;
  posix_spawn_file_actions_addopen(&spawn.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&spawn.actions, write_end.fd, 1);
  posix_spawn_file_actions_adddup2(&spawn.actions, write_end.fd, 2);

  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, args[0], &spawn.actions, nullptr, args.data(), environ);
  write_end.reset();
  if (spawned != 0) {
    *output = "cannot run '" + argv[0] + "': " + std::strerror(spawned);
    return -1;
  }
  char chunk[4096];
  for (;;) {
    ssize_t n = ::read(read_end.fd, chunk, sizeof chunk);
    if (n > 0)
      output->append(chunk, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      *output += std::string("cannot wait for '") + argv[0] + "': " + std::strerror(errno);
      return -1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  *output += "'" + argv[0] + "' was killed by signal " + std::to_string(WTERMSIG(status));
  return -1;
}

bool link_shared_library(const std::string& object_path, const std::string& out_path,
                         const std::string& runtime_dir, std::string* error) {
  // Unresolved symbols fail at link time, not when the library is loaded.
  const std::vector<std::string> argv = {"cc",
                                         "-shared",
                                         "-o",
                                         out_path,
                                         object_path,
                                         "-L" + runtime_dir,
                                         "-ldsc_runtime",
                                         "-Wl,-rpath," + runtime_dir,
                                         "-lm",
                                         "-Wl,--no-undefined",
                                         "-Wl,-z,noexecstack"};
  std::string output;
  int status = run_process(argv, &output);
  if (status == 0) return true;
  std::string command;
  for (const std::string& a : argv)
    command += (command.empty() ? "" : " ") + a;
  std::string message = "linking " + out_path + " failed";
  if (status > 0) message += " (the linker exited with status " + std::to_string(status) + ")";
  message += ": " + command;
  while (!output.empty() && output.back() == '\n')
    output.pop_back();
  if (!output.empty()) message += "\n" + output;
  set_error(error, message);
  return false;
}

bool emit_shared_library(llvm::Module& module, llvm::TargetMachine& tm, const std::string& out_path,
                         const std::string& runtime_dir, std::string* error) {
  llvm::SmallString<128> object;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("dsc", "o", object)) {
    set_error(error, "cannot create a temporary object file: " + ec.message());
    return false;
  }
  const std::string object_path(object.str());
  bool ok = write_object_file(module, tm, object_path, error) &&
            link_shared_library(object_path, out_path, runtime_dir, error);
  llvm::sys::fs::remove(object_path);
  return ok;
}

} // namespace dsc::cpu
