// The C API (dsc_runtime.h) over Model. Every entry point catches C++ exceptions (such as
// std::bad_alloc) and reports them through dsc_last_error, so none crosses the C boundary.
#include "runtime/dsc_runtime.h"

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "runtime/Model.h"
#include "runtime/ThreadPool.h"
#include "runtime/cuda/Device.h"
#include "runtime/cuda/DeviceTensor.h"
#include "runtime/gemm/ConstantPacks.h"

struct dsc_model {
  std::unique_ptr<dsc::runtime::Model> model;
  // dsc_model_param_type's strings, per function and parameter.
  std::vector<std::vector<std::string>> param_types;
};

namespace {

using namespace dsc::runtime;

thread_local std::string t_last_error;

void set_error(std::string message) {
  t_last_error = std::move(message);
}

// A DLManagedTensor that owns its Tensor; the deleter frees both.
struct OwnedTensor {
  DLManagedTensor managed{};
  Tensor tensor;
};

void delete_owned(DLManagedTensor* self) {
  if (self) delete static_cast<OwnedTensor*>(self->manager_ctx);
}

DLManagedTensor* release(Tensor tensor) {
  auto owned = std::make_unique<OwnedTensor>();
  owned->tensor = std::move(tensor);
  owned->managed.dl_tensor = owned->tensor.dl_view();
  owned->managed.manager_ctx = owned.get();
  owned->managed.deleter = delete_owned;
  return &owned.release()->managed;
}

const FunctionInfo* find_function(const dsc_model* model, const char* function) {
  if (!model) {
    set_error("the model is null");
    return nullptr;
  }
  if (!function) {
    set_error("the function name is null");
    return nullptr;
  }
  const FunctionInfo* info = model->model->manifest().find(function);
  if (!info) set_error(std::string("the model has no function '") + function + "'");
  return info;
}

// The parameter `param` of `function`, or null with the error set.
const TensorInfo* find_param(const dsc_model* model, const char* function, int param) {
  const FunctionInfo* info = find_function(model, function);
  if (!info) return nullptr;
  if (param < 0 || static_cast<size_t>(param) >= info->params.size()) {
    set_error("function '" + info->name + "' has no parameter " + std::to_string(param) +
              " (it has " + std::to_string(info->params.size()) + ")");
    return nullptr;
  }
  return &info->params[static_cast<size_t>(param)];
}

template <typename T, typename F> T guarded(T on_error, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    set_error(std::string("internal error: ") + e.what());
  } catch (...) {
    set_error("internal error: unknown exception");
  }
  return on_error;
}

} // namespace

extern "C" {

const char* dsc_last_error(void) {
  return t_last_error.c_str();
}

dsc_model* dsc_model_load(const char* path) {
  return guarded<dsc_model*>(nullptr, [&]() -> dsc_model* {
    if (!path) {
      set_error("the model path is null");
      return nullptr;
    }
    std::string error;
    std::unique_ptr<Model> model = load_shared_library(path, &error);
    if (!model) {
      set_error(error);
      return nullptr;
    }
    auto m = std::make_unique<dsc_model>();
    for (const FunctionInfo& f : model->manifest().functions) {
      std::vector<std::string> types;
      for (const TensorInfo& p : f.params)
        types.push_back(p.type_string());
      m->param_types.push_back(std::move(types));
    }
    m->model = std::move(model);
    return m.release();
  });
}

void dsc_model_free(dsc_model* model) {
  delete model;
}

int dsc_model_num_functions(const dsc_model* model) {
  if (!model) {
    set_error("the model is null");
    return -1;
  }
  return static_cast<int>(model->model->manifest().functions.size());
}

const char* dsc_model_function_name(const dsc_model* model, int function) {
  if (!model) {
    set_error("the model is null");
    return nullptr;
  }
  const auto& functions = model->model->manifest().functions;
  if (function < 0 || static_cast<size_t>(function) >= functions.size()) {
    set_error("the model has no function " + std::to_string(function) + " (it has " +
              std::to_string(functions.size()) + ")");
    return nullptr;
  }
  return functions[static_cast<size_t>(function)].name.c_str();
}

int dsc_model_num_params(const dsc_model* model, const char* function) {
  return guarded<int>(-1, [&] {
    const FunctionInfo* info = find_function(model, function);
    return info ? static_cast<int>(info->params.size()) : -1;
  });
}

const char* dsc_model_param_name(const dsc_model* model, const char* function, int param) {
  return guarded<const char*>(nullptr, [&]() -> const char* {
    const TensorInfo* p = find_param(model, function, param);
    return p ? p->name.c_str() : nullptr;
  });
}

const char* dsc_model_param_type(const dsc_model* model, const char* function, int param) {
  return guarded<const char*>(nullptr, [&]() -> const char* {
    const TensorInfo* p = find_param(model, function, param);
    if (!p) return nullptr;
    const auto& functions = model->model->manifest().functions;
    size_t f = static_cast<size_t>(model->model->manifest().find(function) - functions.data());
    return model->param_types[f][static_cast<size_t>(param)].c_str();
  });
}

int dsc_model_run(dsc_model* model, const char* function, const DLTensor* const* inputs,
                  int num_inputs, DLManagedTensor** outputs, int max_outputs, int* num_outputs) {
  return guarded<int>(1, [&] {
    const FunctionInfo* info = find_function(model, function);
    if (!info) return 1;
    if (num_inputs < 0 || (num_inputs > 0 && !inputs)) {
      set_error("dsc_model_run: " + std::to_string(num_inputs) + " inputs at a null array");
      return 1;
    }
    if (!num_outputs || (max_outputs > 0 && !outputs)) {
      set_error("dsc_model_run: the outputs array or num_outputs is null");
      return 1;
    }
    if (static_cast<size_t>(std::max(max_outputs, 0)) < info->outputs.size()) {
      set_error("function '" + info->name + "' returns " + std::to_string(info->outputs.size()) +
                " outputs, but max_outputs is " + std::to_string(max_outputs));
      return 1;
    }
    std::vector<const DLTensor*> args(inputs, inputs + num_inputs);
    CallResult result = model->model->run(function, args);
    if (!result.ok()) {
      set_error(result.error);
      return 1;
    }
    // Wrap all before storing any, so that a failure stores nothing.
    std::vector<std::unique_ptr<DLManagedTensor, void (*)(DLManagedTensor*)>> wrapped;
    wrapped.reserve(result.outputs.size());
    for (Tensor& t : result.outputs)
      wrapped.emplace_back(release(std::move(t)), delete_owned);
    for (size_t i = 0; i < wrapped.size(); ++i)
      outputs[i] = wrapped[i].release();
    *num_outputs = static_cast<int>(wrapped.size());
    return 0;
  });
}

void dsc_set_num_threads(int num_threads) {
  guarded<int>(0, [&] {
    set_global_num_threads(num_threads);
    return 0;
  });
}

int dsc_declare_constant(const void* data, size_t bytes) {
  return guarded<int>(1, [&] {
    std::string error;
    if (dsc::runtime::gemm::declare_constant(data, bytes, &error)) return 0;
    set_error("dsc_declare_constant: " + error);
    return 1;
  });
}

int dsc_release_constant(const void* data) {
  return guarded<int>(1, [&] {
    if (dsc::runtime::gemm::release_constant(data)) return 0;
    set_error("dsc_release_constant: no constant memory starts at this address");
    return 1;
  });
}

int dsc_get_num_threads(void) {
  return global_thread_pool().num_threads();
}

int dsc_cuda_available(void) {
  return guarded<int>(1, [&] {
    std::string error;
    if (dsc::runtime::cuda::device(&error)) return 0;
    set_error(error);
    return 1;
  });
}

DLManagedTensor* dsc_tensor_copy(const DLTensor* src, int device_type) {
  return guarded<DLManagedTensor*>(nullptr, [&]() -> DLManagedTensor* {
    if (!src) {
      set_error("dsc_tensor_copy: the source tensor is null");
      return nullptr;
    }
    if (device_type != kDLCPU && device_type != kDLCUDA) {
      set_error("dsc_tensor_copy: cannot copy to device type " + std::to_string(device_type) +
                ": dsc copies to kDLCPU (1) or kDLCUDA (2)");
      return nullptr;
    }
    std::string error;
    std::optional<Tensor> copy =
        dsc::runtime::cuda::copy_to(*src, static_cast<DLDeviceType>(device_type), &error);
    if (!copy) {
      set_error("dsc_tensor_copy: " + error);
      return nullptr;
    }
    return release(std::move(*copy));
  });
}

} // extern "C"
