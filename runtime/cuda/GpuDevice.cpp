#include "runtime/cuda/GpuDevice.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <vector>

#include "runtime/Memory.h"
#include "runtime/cuda/ChooseImage.h"
#include "runtime/cuda/Cublas.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/Cudnn.h"

namespace dsc::runtime::cuda {

namespace {

// Without the opt-in attribute a kernel may use this much dynamic shared memory.
constexpr int64_t kDefaultSharedLimit = 48 * 1024;

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

std::nullptr_t fail_null(std::string* error, std::string message) {
  fail(error, std::move(message));
  return nullptr;
}

CUdeviceptr device_pointer(const void* p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}

// The calling thread's stream. `gone` is trivially destructible, so it can be read while
// other thread-locals are destroyed after this one (the arena cache releases memory then).
struct ThreadStream {
  const Driver* driver = nullptr;
  CUstream stream = nullptr;
  ~ThreadStream();
};
thread_local ThreadStream t_stream;
thread_local bool t_stream_gone = false;

ThreadStream::~ThreadStream() {
  t_stream_gone = true;
  if (stream) driver->cuStreamDestroy(stream);
}

// Kernel arguments, reused from one launch to the next on each thread.
thread_local std::vector<CUdeviceptr> t_pointers;
thread_local std::vector<void*> t_arguments;

} // namespace

struct GpuDevice::LoadedModule {
  CUmodule module = nullptr;
  std::string name;  // the module's
  std::string image; // "sm_90 (cubin)"
  std::mutex mutex;  // guards functions
  struct Function {
    CUfunction function = nullptr;
    int64_t shared_limit = kDefaultSharedLimit; // the dynamic shared memory it may use
  };
  std::unordered_map<std::string, Function> functions;
};

std::unique_ptr<GpuDevice> GpuDevice::open(std::string* error) {
  const Driver* d = load_driver(error);
  if (!d) return nullptr;
  CUresult r = d->cuInit(0);
  if (r != kCudaSuccess) return fail_null(error, d->failed("cuInit", r));
  int count = 0;
  r = d->cuDeviceGetCount(&count);
  if (r != kCudaSuccess) return fail_null(error, d->failed("cuDeviceGetCount", r));
  if (count < 1) return fail_null(error, "the driver sees no GPU");
  std::unique_ptr<GpuDevice> g(new GpuDevice());
  g->driver_ = d;
  r = d->cuDeviceGet(&g->device_, 0);
  if (r != kCudaSuccess) return fail_null(error, d->failed("cuDeviceGet", r));
  int major = 0, minor = 0, pools = 0;
  r = d->cuDeviceGetAttribute(&major, kAttrComputeCapabilityMajor, g->device_);
  if (r == kCudaSuccess)
    r = d->cuDeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, g->device_);
  if (r == kCudaSuccess)
    r = d->cuDeviceGetAttribute(&g->max_shared_optin_, kAttrMaxSharedMemoryPerBlockOptin,
                                g->device_);
  int sms = 0, threads_per_sm = 0;
  if (r == kCudaSuccess) r = d->cuDeviceGetAttribute(&sms, kAttrMultiprocessorCount, g->device_);
  if (r == kCudaSuccess)
    r = d->cuDeviceGetAttribute(&threads_per_sm, kAttrMaxThreadsPerMultiprocessor, g->device_);
  if (r != kCudaSuccess) return fail_null(error, d->failed("cuDeviceGetAttribute", r));
  g->arch_ = major * 10 + minor;
  g->resident_threads_ = std::max<int64_t>(1, int64_t{sms} * threads_per_sm);
  g->max_shared_optin_ = std::max<int>(g->max_shared_optin_, kDefaultSharedLimit);
  char name[256] = {};
  if (d->cuDeviceGetName(name, sizeof name - 1, g->device_) != kCudaSuccess)
    std::strcpy(name, "CUDA device 0");
  g->name_ = name;
  r = d->cuDevicePrimaryCtxRetain(&g->context_, g->device_);
  if (r != kCudaSuccess) return fail_null(error, d->failed("cuDevicePrimaryCtxRetain", r));
  if (!g->bind(error)) return nullptr;
  // Freed memory stays in the default pool for the next call instead of going back to the
  // driver at every synchronization.
  if (d->cuMemAllocAsync &&
      d->cuDeviceGetAttribute(&pools, kAttrMemoryPoolsSupported, g->device_) == kCudaSuccess &&
      pools) {
    CUmemoryPool pool = nullptr;
    uint64_t keep = std::numeric_limits<uint64_t>::max();
    g->pools_ = d->cuDeviceGetDefaultMemPool(&pool, g->device_) == kCudaSuccess &&
                d->cuMemPoolSetAttribute(pool, kMemPoolAttrReleaseThreshold, &keep) == kCudaSuccess;
  }
  const char* sync = std::getenv("DSC_CUDA_SYNC");
  g->sync_each_ = sync && std::strcmp(sync, "1") == 0;
  return g;
}

int64_t GpuDevice::resident_threads() const { return resident_threads_; }

std::string GpuDevice::describe() const {
  return name_ + " (sm_" + std::to_string(arch_) + ")";
}

bool GpuDevice::bind(std::string* error) {
  CUresult r = driver_->cuCtxSetCurrent(context_);
  if (r != kCudaSuccess) return fail(error, driver_->failed("cuCtxSetCurrent", r));
  return true;
}

CUstream GpuDevice::stream(std::string* error) {
  if (!bind(error)) return nullptr;
  ThreadStream& t = t_stream;
  if (t.stream) return t.stream;
  CUresult r = driver_->cuStreamCreate(&t.stream, kStreamNonBlocking);
  if (r != kCudaSuccess) {
    t.stream = nullptr;
    return fail_null(error, driver_->failed("cuStreamCreate", r));
  }
  t.driver = driver_;
  return t.stream;
}

bool GpuDevice::settle(CUstream s, std::string* error) {
  if (!sync_each_) return true;
  CUresult r = driver_->cuStreamSynchronize(s);
  if (r != kCudaSuccess)
    return fail(error, "failed on the GPU (DSC_CUDA_SYNC=1): " + driver_->describe(r));
  return true;
}

void* GpuDevice::allocate(uint64_t bytes, const std::string& what, std::string* error) {
  const std::string where = "cannot allocate " + describe_bytes(bytes) + " of device memory for " +
                            (what.empty() ? "a tensor" : what);
  std::string reason;
  CUstream s = stream(&reason);
  if (!s) return fail_null(error, where + ": " + reason);
  // A zero-byte request still gets a distinct, valid pointer.
  const size_t size = static_cast<size_t>(std::max<uint64_t>(bytes, 1));
  CUdeviceptr p = 0;
  CUresult r = pools_ ? driver_->cuMemAllocAsync(&p, size, s) : driver_->cuMemAlloc(&p, size);
  if (r == kCudaSuccess) return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  if (r == kCudaErrorOutOfMemory) {
    size_t free = 0, total = 0;
    std::string available;
    if (driver_->cuMemGetInfo(&free, &total) == kCudaSuccess)
      available =
          " (" + describe_bytes(free) + " free of " + describe_bytes(total) + " on " + name_ + ")";
    return fail_null(error, where + ": out of device memory" + available);
  }
  return fail_null(error,
                   where + ": " + driver_->failed(pools_ ? "cuMemAllocAsync" : "cuMemAlloc", r));
}

void GpuDevice::release(void* pointer) {
  if (!pointer || !bind(nullptr)) return;
  const CUdeviceptr p = device_pointer(pointer);
  if (!pools_) {
    driver_->cuMemFree(p);
    return;
  }
  CUstream s = !t_stream_gone ? t_stream.stream : nullptr;
  driver_->cuMemFreeAsync(p, s);
}

bool GpuDevice::copy(void* dst, const void* src, uint64_t bytes, CopyKind kind,
                     std::string* error) {
  if (bytes == 0) return true;
  CUstream s = stream(error);
  if (!s) return false;
  CUresult r = kCudaSuccess;
  const char* call = "";
  switch (kind) {
  case CopyKind::HostToDevice:
    call = "cuMemcpyHtoD";
    r = driver_->cuMemcpyHtoDAsync(device_pointer(dst), src, bytes, s);
    break;
  case CopyKind::DeviceToHost:
    call = "cuMemcpyDtoH";
    r = driver_->cuMemcpyDtoHAsync(dst, device_pointer(src), bytes, s);
    break;
  case CopyKind::DeviceToDevice:
    call = "cuMemcpyDtoD";
    r = driver_->cuMemcpyDtoDAsync(device_pointer(dst), device_pointer(src), bytes, s);
    break;
  }
  if (r != kCudaSuccess) return fail(error, driver_->failed(call, r));
  if (kind == CopyKind::DeviceToDevice) return settle(s, error);
  // The host side of the copy must be done (or staged) before returning.
  r = driver_->cuStreamSynchronize(s);
  if (r != kCudaSuccess) return fail(error, driver_->failed(call, r));
  return true;
}

GpuDevice::LoadedModule* GpuDevice::load(dsc_cuda_module* module, std::string* error) {
  std::atomic_ref<void*> slot(module->loaded);
  if (void* loaded = slot.load(std::memory_order_acquire))
    return static_cast<LoadedModule*>(loaded);
  std::lock_guard<std::mutex> lock(load_mutex_);
  if (void* loaded = slot.load(std::memory_order_acquire))
    return static_cast<LoadedModule*>(loaded);
  const std::string name = module->name ? module->name : "?";
  int index = choose_image(*module, arch_, error);
  if (index < 0) return nullptr;
  const dsc_cuda_image& image = module->images[index];
  const std::string which = describe_image(image);
  if (image.is_ptx && static_cast<const char*>(image.data)[image.size - 1] != '\0')
    return fail_null(error, "module '" + name + "': its " + which + " is not NUL-terminated");
  // The JIT's log says what is wrong with PTX the driver refuses.
  char error_log[8192] = {};
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes};
  void* values[] = {error_log, reinterpret_cast<void*>(uintptr_t{sizeof error_log - 1})};
  CUmodule m = nullptr;
  CUresult r = driver_->cuModuleLoadDataEx(&m, image.data, 2, options, values);
  if (r != kCudaSuccess) {
    std::string message = "cannot load module '" + name + "' (" + which + ") on sm_" +
                          std::to_string(arch_) + ": " + driver_->failed("cuModuleLoadData", r);
    if (error_log[0]) message += "\n" + std::string(error_log);
    return fail_null(error, message);
  }
  auto* loaded = new LoadedModule(); // lives as long as the process: module->loaded keeps it
  loaded->module = m;
  loaded->name = name;
  loaded->image = which;
  slot.store(loaded, std::memory_order_release);
  return loaded;
}

CUfunction GpuDevice::function(LoadedModule* module, const char* kernel, int64_t shared_bytes,
                               std::string* error) {
  std::lock_guard<std::mutex> lock(module->mutex);
  auto it = module->functions.find(kernel);
  if (it == module->functions.end()) {
    CUfunction f = nullptr;
    CUresult r = driver_->cuModuleGetFunction(&f, module->module, kernel);
    if (r != kCudaSuccess)
      return fail_null(error,
                       "module '" + module->name + "' (" + module->image +
                           ") has no such kernel: " + driver_->failed("cuModuleGetFunction", r));
    it = module->functions.emplace(kernel, LoadedModule::Function{f, kDefaultSharedLimit}).first;
  }
  LoadedModule::Function& f = it->second;
  if (shared_bytes > f.shared_limit) {
    CUresult r = driver_->cuFuncSetAttribute(f.function, kFuncAttrMaxDynamicSharedSizeBytes,
                                             static_cast<int>(shared_bytes));
    if (r != kCudaSuccess)
      return fail_null(error, "cannot give it " + std::to_string(shared_bytes) +
                                  " bytes of dynamic shared memory: " +
                                  driver_->failed("cuFuncSetAttribute", r));
    f.shared_limit = shared_bytes;
  }
  return f.function;
}

bool GpuDevice::launch(dsc_cuda_module* module, const char* kernel, const LaunchShape& shape,
                       void* const* buffers, int num_buffers, const int64_t* symbols,
                       int num_symbols, std::string* error) {
  if (!module || !kernel) return fail(error, "launched without a module or kernel name");
  if (num_buffers < 0 || num_symbols < 0 || (num_buffers > 0 && !buffers) ||
      (num_symbols > 0 && !symbols))
    return fail(error, "invalid arguments: " + std::to_string(num_buffers) + " buffers, " +
                           std::to_string(num_symbols) + " symbols");
  constexpr int64_t kUnsignedMax = std::numeric_limits<unsigned>::max();
  bool empty = false;
  for (int i = 0; i < 3; ++i) {
    const int64_t g = shape.grid[i], b = shape.block[i];
    if (g < 0 || b < 0 || g > kUnsignedMax || b > kUnsignedMax) {
      std::string text = "invalid launch shape: grid (";
      for (int j = 0; j < 3; ++j)
        text += (j ? ", " : "") + std::to_string(shape.grid[j]);
      text += "), block (";
      for (int j = 0; j < 3; ++j)
        text += (j ? ", " : "") + std::to_string(shape.block[j]);
      return fail(error, text + ")");
    }
    empty = empty || g == 0 || b == 0;
  }
  if (shape.shared_bytes < 0 || shape.shared_bytes > max_shared_optin_)
    return fail(error, "it asks for " + std::to_string(shape.shared_bytes) +
                           " bytes of dynamic shared memory; sm_" + std::to_string(arch_) +
                           " allows at most " + std::to_string(max_shared_optin_) + " per block");
  if (empty) return true;
  CUstream s = stream(error);
  if (!s) return false;
  LoadedModule* loaded = load(module, error);
  if (!loaded) return false;
  CUfunction f = function(loaded, kernel, shape.shared_bytes, error);
  if (!f) return false;
  // Each argument is passed by the address of its value: device pointers, then int64s.
  std::vector<CUdeviceptr>& pointers = t_pointers;
  std::vector<void*>& arguments = t_arguments;
  pointers.assign(static_cast<size_t>(num_buffers), 0);
  arguments.clear();
  for (int i = 0; i < num_buffers; ++i) {
    pointers[static_cast<size_t>(i)] = device_pointer(buffers[i]);
    arguments.push_back(&pointers[static_cast<size_t>(i)]);
  }
  for (int i = 0; i < num_symbols; ++i)
    arguments.push_back(const_cast<int64_t*>(&symbols[i]));
  CUresult r = driver_->cuLaunchKernel(
      f, static_cast<unsigned>(shape.grid[0]), static_cast<unsigned>(shape.grid[1]),
      static_cast<unsigned>(shape.grid[2]), static_cast<unsigned>(shape.block[0]),
      static_cast<unsigned>(shape.block[1]), static_cast<unsigned>(shape.block[2]),
      static_cast<unsigned>(shape.shared_bytes), s, arguments.empty() ? nullptr : arguments.data(),
      nullptr);
  if (r != kCudaSuccess) return fail(error, driver_->failed("cuLaunchKernel", r));
  return settle(s, error);
}

bool GpuDevice::zero(float* p, int64_t floats, CUstream s, std::string* error) {
  CUresult r = driver_->cuMemsetD32Async(device_pointer(p), 0, static_cast<size_t>(floats), s);
  if (r != kCudaSuccess) return fail(error, driver_->failed("cuMemsetD32", r));
  return settle(s, error);
}

bool GpuDevice::sgemm(const float* a, const float* b, float* c, const dsc_strided_product& product,
                      std::string* error) {
  SgemmPlan plan;
  if (!plan_sgemm(product, &plan, error)) return false;
  if (plan.action == SgemmPlan::Action::Nothing) return true;
  CUstream s = stream(error);
  if (!s) return false;
  if (plan.action == SgemmPlan::Action::Zero)
    return zero(c + plan.offset_c, plan.zero_floats, s, error);
  const Cublas* cublas = Cublas::load(error);
  if (!cublas || !cublas->sgemm(s, plan, a, b, c, error)) return false;
  return settle(s, error);
}

bool GpuDevice::conv2d(const float* x, const float* w, float* y, const Conv2d& conv,
                       std::string* error) {
  Conv2dPlan plan;
  if (!plan_conv2d(conv, &plan, error)) return false;
  if (plan.action == Conv2dPlan::Action::Nothing) return true;
  CUstream s = stream(error);
  if (!s) return false;
  if (plan.action == Conv2dPlan::Action::Zero) return zero(y, plan.zero_floats, s, error);
  const Cudnn* cudnn = Cudnn::load(error);
  Cudnn::Choice choice;
  if (!cudnn || !cudnn->choose(s, plan, &choice, error)) return false;
  return with_workspace(
      choice.workspace_bytes, s,
      [&](void* workspace) { return cudnn->forward(choice, x, w, y, workspace, error); },
      error);
}

bool GpuDevice::sgemm_epilogue(const float* a, const float* b, const float* bias, float* c,
                               const dsc_strided_product& product, GemmEpilogue epilogue,
                               std::string* error) {
  SgemmPlan plan;
  if (!plan_lt_sgemm(product, &plan, error)) return false;
  if (plan.action == SgemmPlan::Action::Nothing) return true;
  CUstream s = stream(error);
  if (!s) return false;
  const CublasLt* lt = CublasLt::load(error);
  CublasLt::Choice choice;
  if (!lt || !lt->choose(plan, epilogue, a, b, c, &choice, error)) return false;
  return with_workspace(
      choice.workspace_bytes, s,
      [&](void* workspace) { return lt->matmul(s, plan, choice, a, b, bias, c, workspace, error); },
      error);
}

bool GpuDevice::with_workspace(uint64_t bytes, CUstream s, const std::function<bool(void*)>& run,
                               std::string* error) {
  void* workspace = nullptr;
  if (bytes > 0) {
    workspace = allocate(bytes, "a library's workspace", error);
    if (!workspace) return false;
  }
  bool ok = run(workspace);
  if (workspace && !pools_) ok = driver_->cuStreamSynchronize(s) == kCudaSuccess && ok;
  release(workspace);
  return ok && settle(s, error);
}

bool GpuDevice::synchronize(std::string* error) {
  if (!t_stream.stream) return true; // nothing was queued on this thread
  if (!bind(error)) return false;
  CUresult r = driver_->cuStreamSynchronize(t_stream.stream);
  if (r != kCudaSuccess) return fail(error, driver_->describe(r));
  return true;
}

} // namespace dsc::runtime::cuda
