#include "runtime/cuda/Emulator.h"

#include "runtime/cuda/Cublas.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/Cudnn.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <vector>

#include "runtime/Memory.h"

extern char** environ;

namespace dsc::runtime::cuda {

// The text of emulator/dsc_cuda_emulator.h, generated at build time (runtime/CMakeLists.txt).
extern const char kEmulatorHeader[];

namespace {

using EmulatedKernel = void (*)(void* const*, const int64_t*);
using EmulatorLaunch = int (*)(EmulatedKernel, const int64_t*, const int64_t*, void* const*,
                               const int64_t*, char*, size_t);

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

// A module's kernels compiled for the CPU, or why they could not be: a module that fails to
// compile fails every launch with the same message, compiled once. Lives as long as the
// process (module->loaded keeps it, and the library is never closed).
struct LoadedModule {
  std::string failure;
  void* handle = nullptr;
  EmulatorLaunch launch = nullptr;
  std::string name;
  // The library's scheduler and built-in variables are globals: one launch at a time.
  std::mutex running;
};

std::mutex g_load_mutex;
// Every module loaded so far, never freed: a dsc_cuda_module may go away (a model's library
// closed) while its kernels' library stays mapped.
std::vector<LoadedModule*>* g_loaded = new std::vector<LoadedModule*>();

struct Pipe {
  int fds[2] = {-1, -1};
  ~Pipe() {
    close_read();
    close_write();
  }
  void close_read() {
    if (fds[0] >= 0) ::close(fds[0]);
    fds[0] = -1;
  }
  void close_write() {
    if (fds[1] >= 0) ::close(fds[1]);
    fds[1] = -1;
  }
};

// Runs argv with stdout and stderr captured; its exit status, or kNotRun or kNotFinished with
// *output saying why.
constexpr int kNotRun = -1;
constexpr int kNotFinished = -2;
int run_compiler(const std::vector<std::string>& argv, std::string* output) {
  output->clear();
  Pipe pipe;
  if (::pipe2(pipe.fds, O_CLOEXEC) != 0) {
    *output = std::string("cannot create a pipe: ") + std::strerror(errno);
    return kNotRun;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe.fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe.fds[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  pipe.close_write();
  if (spawned != 0) {
    *output = "cannot run '" + argv[0] + "': " + std::strerror(spawned);
    return kNotRun;
  }
  char chunk[4096];
  for (;;) {
    ssize_t n = ::read(pipe.fds[0], chunk, sizeof chunk);
    if (n > 0)
      output->append(chunk, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      *output += "cannot wait for '" + argv[0] + "': " + std::strerror(errno);
      return kNotFinished;
    }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  *output += "'" + argv[0] + "' was killed by signal " + std::to_string(WTERMSIG(status));
  return kNotFinished;
}

// "c++", or the words of $DSC_CUDA_EMULATOR_CXX ("ccache g++-12").
std::vector<std::string> compiler_command() {
  std::vector<std::string> words;
  const char* env = std::getenv("DSC_CUDA_EMULATOR_CXX");
  std::string text = env ? env : "";
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  if (words.empty()) words.push_back("c++");
  return words;
}

// A file name from the module's name: "bert_layer" -> "bert_layer.cu".
std::string file_stem(const std::string& name) {
  std::string stem;
  for (char c : name.substr(0, 64))
    stem +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ? c : '_';
  return stem.empty() || stem[0] == '.' ? "module" + stem : stem;
}

// The first `max_lines` lines of compiler output, and how many were left out.
std::string first_lines(const std::string& text, int max_lines) {
  size_t end = 0;
  int lines = 0;
  while (end < text.size() && lines < max_lines) {
    size_t newline = text.find('\n', end);
    end = newline == std::string::npos ? text.size() : newline + 1;
    ++lines;
  }
  std::string shown = text.substr(0, end);
  while (!shown.empty() && shown.back() == '\n')
    shown.pop_back();
  if (end < text.size()) {
    int rest = 0;
    for (size_t i = end; i < text.size(); ++i)
      rest += text[i] == '\n';
    shown += "\n[" + std::to_string(rest) + " more lines]";
  }
  return shown;
}

bool write_file(const std::string& path, const char* text, std::string* error) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return fail(error, "cannot write " + path);
  return true;
}

// Compiles and loads module.source into *loaded; the caller holds g_load_mutex.
bool compile(const dsc_cuda_module& module, LoadedModule* loaded, std::string* error) {
  const std::string name = module.name ? module.name : "?";
  const std::string what = "cannot compile CUDA module '" + name + "' for the emulator";
  if (!module.source) return fail(error, what + ": it has no CUDA C source");
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/dsc-cuda-emulator-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    return fail(error, what + ": cannot create a temporary directory like " + pattern + ": " +
                           std::strerror(errno));
  const std::string dir = pattern;
  const std::string stem = file_stem(name);
  const std::string header = dir + "/dsc_cuda_emulator.h";
  const std::string source = dir + "/" + stem + ".cu";
  const std::string library = dir + "/lib" + stem + ".so";
  auto cleanup = [&] {
    const char* keep = std::getenv("DSC_CUDA_EMULATOR_KEEP");
    if (keep && std::strcmp(keep, "1") == 0) return;
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  };
  std::string reason;
  if (!write_file(header, kEmulatorHeader, &reason) ||
      !write_file(source, module.source, &reason)) {
    cleanup();
    return fail(error, what + ": " + reason);
  }
  std::vector<std::string> argv = compiler_command();
  const std::string compiler = argv[0];
  // -Bsymbolic: a kernel calls its library's own functions even where the process exports one
  // of the same name.
  argv.insert(argv.end(),
              {"-std=c++17", "-O1", "-shared", "-fPIC", "-Wl,-Bsymbolic", "-DDSC_CUDA_EMULATOR",
               "-include", header, "-x", "c++", source, "-x", "none", "-o", library});
  std::string output;
  int status = run_compiler(argv, &output);
  if (status != 0) {
    std::string message = what + " (";
    message += status > 0 ? "'" + compiler + "' exited with status " + std::to_string(status)
               : status == kNotRun ? "'" + compiler + "' could not be run"
                                   : "'" + compiler + "' did not finish";
    message += "; the source is kept in " + source + ")";
    if (!output.empty()) message += ":\n" + first_lines(output, 20);
    std::string command;
    for (const std::string& arg : argv)
      command += (command.empty() ? "" : " ") + arg;
    message += "\nthe command: " + command;
    return fail(error, message);
  }
  dlerror();
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    return fail(error, "cannot load the emulator's build of CUDA module '" + name + "' (" +
                           library + ", kept): " + (e ? e : "unknown error"));
  }
  auto launch = reinterpret_cast<EmulatorLaunch>(::dlsym(handle, "dsc_emu_launch"));
  if (!launch) {
    ::dlclose(handle);
    return fail(error, "the emulator's build of CUDA module '" + name + "' (" + library +
                           ", kept) has no dsc_emu_launch: was it compiled without "
                           "dsc_cuda_emulator.h?");
  }
  cleanup(); // the loaded library stays mapped
  loaded->handle = handle;
  loaded->launch = launch;
  return true;
}

LoadedModule* load(dsc_cuda_module* module) {
  std::atomic_ref<void*> slot(module->loaded);
  if (void* loaded = slot.load(std::memory_order_acquire))
    return static_cast<LoadedModule*>(loaded);
  std::lock_guard<std::mutex> lock(g_load_mutex);
  if (void* loaded = slot.load(std::memory_order_acquire))
    return static_cast<LoadedModule*>(loaded);
  auto* loaded = new LoadedModule();
  g_loaded->push_back(loaded);
  loaded->name = module->name ? module->name : "?";
  compile(*module, loaded, &loaded->failure); // on failure, handle stays null
  slot.store(loaded, std::memory_order_release);
  return loaded;
}

std::string describe_shape(const LaunchShape& shape) {
  std::string text = "grid (";
  for (int i = 0; i < 3; ++i)
    text += (i ? ", " : "") + std::to_string(shape.grid[i]);
  text += "), block (";
  for (int i = 0; i < 3; ++i)
    text += (i ? ", " : "") + std::to_string(shape.block[i]);
  return text + ")";
}

class EmulatorDevice : public Device {
public:
  std::string describe() const override { return "the CUDA block emulator (CPU)"; }

  void* allocate(uint64_t bytes, const std::string& what, std::string* error) override {
    auto failed = [&](const std::string& reason) -> void* {
      fail(error, "cannot allocate " + describe_bytes(bytes) + " of device memory for " +
                      (what.empty() ? "a tensor" : what) + ": " + reason);
      return nullptr;
    };
    if (bytes > allocation_limit())
      return failed("the emulator's device memory is the machine's " +
                    describe_bytes(allocation_limit()));
    // A zero-byte request still gets a distinct, valid pointer.
    uint64_t rounded = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, static_cast<size_t>(rounded));
    if (!p) return failed("out of memory");
    return p;
  }

  void release(void* pointer) override { std::free(pointer); }

  bool copy(void* dst, const void* src, uint64_t bytes, CopyKind, std::string* error) override {
    if (bytes == 0) return true;
    if (!dst || !src)
      return fail(error, "copy of " + describe_bytes(bytes) + " with a null pointer");
    std::memmove(dst, src, static_cast<size_t>(bytes));
    return true;
  }

  bool launch(dsc_cuda_module* module, const char* kernel, const LaunchShape& shape,
              void* const* buffers, int num_buffers, const int64_t* symbols, int num_symbols,
              std::string* error) override {
    if (!module || !kernel) return fail(error, "launched without a module or kernel name");
    if (num_buffers < 0 || num_symbols < 0 || (num_buffers > 0 && !buffers) ||
        (num_symbols > 0 && !symbols))
      return fail(error, "invalid arguments: " + std::to_string(num_buffers) + " buffers, " +
                             std::to_string(num_symbols) + " symbols");
    bool empty = false;
    for (int i = 0; i < 3; ++i) {
      if (shape.grid[i] < 0 || shape.block[i] < 0 ||
          shape.grid[i] > std::numeric_limits<unsigned>::max() ||
          shape.block[i] > std::numeric_limits<unsigned>::max())
        return fail(error, "invalid launch shape: " + describe_shape(shape));
      empty = empty || shape.grid[i] == 0 || shape.block[i] == 0;
    }
    if (shape.shared_bytes < 0)
      return fail(error, "invalid launch: " + std::to_string(shape.shared_bytes) +
                             " bytes of dynamic shared memory");
    if (shape.shared_bytes > 0)
      return fail(error, "it asks for " + std::to_string(shape.shared_bytes) +
                             " bytes of dynamic shared memory, which the CUDA block emulator "
                             "does not support (declare __shared__ arrays with a size)");
    if (empty) return true;
    LoadedModule* loaded = load(module);
    if (!loaded->handle) return fail(error, loaded->failure);
    const std::string symbol = std::string("dsc_emu_") + kernel;
    auto entry = reinterpret_cast<EmulatedKernel>(::dlsym(loaded->handle, symbol.c_str()));
    if (!entry)
      return fail(error, "module '" + loaded->name + "' has no kernel '" + kernel +
                             "' (its source defines no " + symbol + " for the emulator)");
    char message[1024] = {};
    int status;
    {
      std::lock_guard<std::mutex> lock(loaded->running);
      status =
          loaded->launch(entry, shape.grid, shape.block, buffers, symbols, message, sizeof message);
    }
    if (status != 0)
      return fail(error, std::string(message[0] ? message : "the emulated launch failed") + " [" +
                             describe_shape(shape) + "]");
    return true;
  }

  // cuBLAS's arguments are still planned, so that a product cuBLAS would refuse fails here too.
  bool sgemm(const float* a, const float* b, float* c, const dsc_strided_product& p,
             std::string* error) override {
    SgemmPlan plan;
    if (!plan_sgemm(p, &plan, error)) return false;
    dsc_rt_gemm_f32_strided(a, b, c, &p);
    return true;
  }

  // cuBLASLt's plan, the CPU's product, then its epilogue by loops.
  bool sgemm_epilogue(const float* a, const float* b, const float* bias, float* c,
                      const dsc_strided_product& p, GemmEpilogue epilogue,
                      std::string* error) override {
    SgemmPlan plan;
    if (!plan_lt_sgemm(p, &plan, error)) return false;
    if (plan.action == SgemmPlan::Action::Nothing) return true;
    dsc_rt_gemm_f32_strided(a, b, c, &p);
    apply_epilogue_loops(p, epilogue, bias, c);
    return true;
  }

  // The same plan as on the GPU, run by loops.
  bool conv2d(const float* x, const float* w, float* y, const Conv2d& conv,
              std::string* error) override {
    Conv2dPlan plan;
    if (!plan_conv2d(conv, &plan, error)) return false;
    conv2d_loops(plan, x, w, y);
    return true;
  }

  bool synchronize(std::string*) override { return true; }

  int64_t resident_threads() const override { return kEmulatedResidentThreads; }

private:
  static constexpr int64_t kEmulatedResidentThreads = 2048;
};

} // namespace

std::unique_ptr<Device> make_emulator_device(std::string*) {
  return std::make_unique<EmulatorDevice>();
}

} // namespace dsc::runtime::cuda

// What the runtime looks up after loading this library (cuda/Device.cpp).
extern "C" dsc::runtime::cuda::Device* dsc_cuda_emulator_create(std::string* error) {
  return dsc::runtime::cuda::make_emulator_device(error).release();
}
