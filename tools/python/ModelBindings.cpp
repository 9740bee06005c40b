// _dsc.Library and _dsc.Function: a built model loaded in this process, and calling its entry
// functions on NumPy arrays, torch tensors or any DLPack producer without copying them.
#include "tools/python/ModelBindings.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <unordered_map>

#include "runtime/Model.h"
#include "runtime/cuda/DeviceTensor.h"
#include "runtime/dsc_runtime.h"
#include "tools/python/PythonErrors.h"

namespace nb = nanobind;

namespace dsc::python {

namespace {

using runtime::CallErrorKind;
using runtime::FunctionInfo;
using runtime::Model;
using runtime::TensorInfo;

// The array library a call's results are made for: that of its first argument.
enum class Framework { None, NumPy, PyTorch };

Framework framework_of(nb::handle obj) {
  static std::unordered_map<PyTypeObject*, Framework> known; // guarded by the GIL
  PyTypeObject* type = Py_TYPE(obj.ptr());
  auto it = known.find(type);
  if (it != known.end()) return it->second;
  Framework f = Framework::None;
  if (nb::hasattr(nb::handle(reinterpret_cast<PyObject*>(type)), "__module__")) {
    std::string module = nb::cast<std::string>(
        nb::str(nb::handle(reinterpret_cast<PyObject*>(type)).attr("__module__")));
    if (module == "numpy") f = Framework::NumPy;
    if (module == "torch" || module.rfind("torch.", 0) == 0) f = Framework::PyTorch;
  }
  known.emplace(type, f);
  return f;
}

std::string type_text(const TensorInfo& t) { return t.type_string(); }

std::string signature(const FunctionInfo& f) {
  std::string s = f.name + "(";
  for (size_t i = 0; i < f.params.size(); ++i)
    s += (i ? ", " : "") + f.params[i].name + ": " + type_text(f.params[i]);
  s += ") -> ";
  if (f.outputs.size() != 1) s += "(";
  for (size_t i = 0; i < f.outputs.size(); ++i) s += (i ? ", " : "") + type_text(f.outputs[i]);
  if (f.outputs.size() != 1) s += ")";
  for (size_t i = 0; i < f.where_clauses.size(); ++i)
    s += (i ? ", " : " where ") + f.where_clauses[i];
  return s;
}

// Whether a DLPack view is dense row-major (as the runtime requires; a dim of size 1 may have
// any stride, and an empty tensor's strides are never read).
bool dense(const DLTensor& t) {
  if (!t.strides) return true;
  int64_t expected = 1, elements = 1;
  for (int32_t i = 0; i < t.ndim; ++i) elements *= t.shape[i];
  if (elements == 0) return true;
  for (int32_t i = t.ndim; i-- > 0;) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

// DLPack's bool (kDLBool, 8 bits) is dsc's bool, which the runtime exchanges as uint8.
DLDataType runtime_dtype(DLDataType d) {
  if (d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bool)) return DLDataType{kDLUInt, 8, 1};
  return d;
}

// torch's own DLPack functions (torch._C._to_dlpack, _from_dlpack), looked up once: a third
// of the cost of Tensor.__dlpack__ and torch.from_dlpack, which check streams and versions
// in Python first.
struct TorchDlpack {
  nb::object to_dlpack, from_dlpack;
  nb::object cuda_synchronize; // torch.cuda.synchronize
};
const TorchDlpack& torch_dlpack() {
  static TorchDlpack* fns = [] {
    nb::module_ c = nb::module_::import_("torch._C");
    nb::module_ cuda = nb::module_::import_("torch.cuda");
    return new TorchDlpack{c.attr("_to_dlpack"), c.attr("_from_dlpack"),
                           cuda.attr("synchronize")}; // kept for the process
  }();
  return *fns;
}

const char* const kDltensor = "dltensor";

// A DLPack capsule owning `tensor`, made a torch tensor by torch._C._from_dlpack.
nb::object torch_tensor(runtime::Tensor tensor, bool is_bool) {
  struct Owned {
    runtime::Tensor tensor;
    std::vector<int64_t> shape;
    DLManagedTensor managed{};
  };
  auto* owned = new Owned{std::move(tensor), {}, {}};
  owned->shape = owned->tensor.shape();
  DLTensor& t = owned->managed.dl_tensor;
  t.data = owned->tensor.data();
  t.device = owned->tensor.device();
  t.ndim = static_cast<int32_t>(owned->shape.size());
  t.dtype = is_bool ? DLDataType{static_cast<uint8_t>(nb::dlpack::dtype_code::Bool), 8, 1}
                    : owned->tensor.dtype();
  t.shape = owned->shape.data();
  owned->managed.manager_ctx = owned;
  owned->managed.deleter = [](DLManagedTensor* m) { delete static_cast<Owned*>(m->manager_ctx); };
  // Released here unless torch took it (and renamed the capsule "used_dltensor").
  PyObject* capsule = PyCapsule_New(&owned->managed, kDltensor, [](PyObject* c) {
    if (!PyCapsule_IsValid(c, kDltensor)) return;
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kDltensor));
    m->deleter(m);
  });
  if (!capsule) {
    owned->managed.deleter(&owned->managed);
    throw nb::python_error();
  }
  return torch_dlpack().from_dlpack(nb::steal(capsule));
}

// A result as `framework`'s tensor, owning the runtime's memory (no copy).
nb::object wrap(runtime::Tensor tensor, bool is_bool, Framework framework) {
  if (framework == Framework::PyTorch) return torch_tensor(std::move(tensor), is_bool);
  auto* owned = new runtime::Tensor(std::move(tensor));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<runtime::Tensor*>(p); });
  std::vector<size_t> shape(owned->shape().begin(), owned->shape().end());
  DLDataType t = owned->dtype();
  nb::dlpack::dtype d{t.code, t.bits, t.lanes};
  if (is_bool) d = nb::dtype<bool>();
  const int device = owned->device().device_type;
  // NumPy holds neither bfloat16 nor device memory: those are DLPack objects (array API).
  if (framework == Framework::NumPy && (t.code == kDLBfloat || device != kDLCPU))
    framework = Framework::None;
  switch (framework) {
  case Framework::NumPy:
    return nb::ndarray<nb::numpy>(owned->data(), shape.size(), shape.data(), owner, nullptr, d,
                                  device)
        .cast();
  case Framework::PyTorch:
    return nb::ndarray<nb::pytorch>(owned->data(), shape.size(), shape.data(), owner, nullptr,
                                    d, device)
        .cast();
  case Framework::None:
    break;
  }
  return nb::ndarray<nb::array_api>(owned->data(), shape.size(), shape.data(), owner, nullptr, d,
                                    device)
      .cast();
}

} // namespace

// An argument as the call sees it: the caller's object, what keeps its DLPack view valid
// (nanobind's array, or torch's DLPack capsule), and the view.
struct Argument {
  nb::object object;
  nb::ndarray<nb::ro> array;
  nb::object capsule;
  DLTensor view{};
  bool is_bool = false; // DLPack's bool, which `view` holds as uint8, as the runtime does
  bool viewed() const { return array.is_valid() || capsule.is_valid(); }
};

namespace {

// The view of `obj` through torch's capsule (torch tensors) or nanobind's DLPack import
// (NumPy, buffers, other producers). False when it cannot be viewed.
bool view(nb::handle obj, Framework framework, Argument* out) {
  if (framework == Framework::PyTorch) {
    nb::object capsule;
    try {
      capsule = torch_dlpack().to_dlpack(obj);
    } catch (const nb::python_error&) {
      return false; // a tensor with the conjugate bit, say: prepared first
    }
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kDltensor));
    if (!managed) {
      PyErr_Clear();
      return false;
    }
    out->capsule = std::move(capsule); // its destructor releases the tensor
    out->view = managed->dl_tensor;
  } else {
    nb::ndarray<nb::ro>& array = out->array;
    if (!nb::try_cast(obj, array, false)) return false;
    DLTensor& t = out->view;
    t.data = const_cast<void*>(array.data()); // byte_offset applied
    t.device = DLDevice{static_cast<DLDeviceType>(array.device_type()), array.device_id()};
    t.ndim = static_cast<int32_t>(array.ndim());
    nb::dlpack::dtype d = array.dtype();
    t.dtype = DLDataType{d.code, d.bits, static_cast<uint16_t>(d.lanes)};
    t.shape = const_cast<int64_t*>(array.shape_ptr());
    t.strides = const_cast<int64_t*>(array.stride_ptr());
    t.byte_offset = 0;
  }
  out->is_bool = out->view.dtype.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bool);
  out->view.dtype = runtime_dtype(out->view.dtype);
  return true;
}

enum class Viewed { Dense, NotAnArray, NotDense };

// `obj` viewed dense in *out. What cannot be viewed as it is (a strided array, a tensor that
// requires grad) goes through `prepare` (dsc/module.py: a dense copy, a detached tensor)
// first.
Viewed dense_view(nb::object obj, nb::handle prepare, Argument* out) {
  out->object = std::move(obj);
  if (view(out->object, framework_of(out->object), out) && dense(out->view)) return Viewed::Dense;
  const bool was_array = out->viewed();
  *out = Argument{prepare(out->object), {}, {}, {}};
  if (!view(out->object, framework_of(out->object), out))
    return was_array ? Viewed::NotDense : Viewed::NotAnArray;
  return dense(out->view) ? Viewed::Dense : Viewed::NotDense;
}

} // namespace

class Function {
public:
  Function(std::shared_ptr<const Model> model, const FunctionInfo* info, nb::object prepare)
      : model_(std::move(model)), info_(info), prepare_(std::move(prepare)),
        bound_(info->params.size()) {}

  const FunctionInfo& info() const { return *info_; }

  // Gives parameter `name` for every later call, and returns what it keeps (the value, or a
  // dense copy of it); None unbinds it.
  nb::object bind(const std::string& name, nb::object value) {
    size_t i = param_index(name);
    if (value.is_none()) {
      bound_[i].reset();
      return nb::none();
    }
    bound_[i] = argument(i, std::move(value));
    return bound_[i]->object;
  }

  bool is_bound(const std::string& name) const { return bound_[param_index(name)].has_value(); }

  nb::object call(nb::args args, nb::kwargs kwargs) {
    const size_t n = info_->params.size();
    std::vector<Argument> given(n);
    size_t next = 0, from_kwargs = 0;
    std::string missing;
    for (size_t i = 0; i < n; ++i) {
      const TensorInfo& p = info_->params[i];
      if (bound_[i]) {
        if (kwargs.contains(p.name.c_str()))
          raise(ErrorClass::Input, label() + ": '" + p.name + "' is bound (Module.bind); pass "
                                   "the other inputs only");
        given[i] = *bound_[i];
        continue;
      }
      nb::object obj;
      if (kwargs.contains(p.name.c_str())) {
        obj = kwargs[p.name.c_str()];
        ++from_kwargs;
      } else if (next < args.size()) {
        obj = nb::borrow(args[next++]);
      } else {
        missing += (missing.empty() ? "" : ", ") + p.name + ": " + type_text(p);
        continue;
      }
      given[i] = argument(i, std::move(obj));
    }
    if (!missing.empty()) raise(ErrorClass::Input, label() + " is missing inputs: " + missing);
    if (next < args.size())
      raise(ErrorClass::Input, label() + " takes " + std::to_string(unbound()) + " input" +
                                   (unbound() == 1 ? "" : "s") + " (" + unbound_names() +
                                   "); got " + std::to_string(args.size()) + " positional");
    if (from_kwargs != kwargs.size()) {
      for (auto [key, value] : kwargs) {
        std::string name = nb::cast<std::string>(nb::str(key));
        bool known = false;
        for (const TensorInfo& p : info_->params) known |= p.name == name;
        if (!known)
          raise(ErrorClass::Input, label() + " has no parameter '" + name + "' (it has " +
                                       unbound_names() + ")");
      }
    }

    std::vector<const DLTensor*> inputs(n);
    Framework framework = Framework::None;
    bool torch_on_gpu = false;
    for (size_t i = 0; i < n; ++i) {
      inputs[i] = &given[i].view;
      if (framework == Framework::None && !bound_[i]) framework = framework_of(given[i].object);
      torch_on_gpu |= given[i].capsule.is_valid() && given[i].view.device.device_type == kDLCUDA;
    }
    // torch writes a CUDA tensor on its own stream, which dsc's stream does not wait for:
    // the device finishes torch's work first. (dsc's own work is finished when a call
    // returns, so torch may read the results on any stream.)
    if (torch_on_gpu) torch_dlpack().cuda_synchronize();
    runtime::CallResult result;
    {
      nb::gil_scoped_release released;
      result = model_->run(info_->name, inputs);
    }
    if (!result.ok()) {
      ErrorClass cls = result.error_kind == CallErrorKind::Shape   ? ErrorClass::Shape
                       : result.error_kind == CallErrorKind::Input ? ErrorClass::Input
                                                                   : ErrorClass::Runtime;
      raise(cls, result.error);
    }
    const size_t outputs = result.outputs.size();
    nb::list out;
    for (size_t k = 0; k < outputs; ++k) {
      const int updated = k < info_->outputs.size() ? info_->outputs[k].updates_param : -1;
      if (updated >= 0) {
        out.append(given[static_cast<size_t>(updated)].object); // the caller's own tensor
        continue;
      }
      out.append(wrap(std::move(result.outputs[k]), info_->outputs[k].dtype == "bool", framework));
    }
    if (outputs == 1) return out[0];
    return nb::tuple(out);
  }

private:
  std::string label() const { return "'" + info_->name + "'"; }

  size_t param_index(const std::string& name) const {
    for (size_t i = 0; i < info_->params.size(); ++i)
      if (info_->params[i].name == name) return i;
    std::string names;
    for (const TensorInfo& p : info_->params) names += (names.empty() ? "" : ", ") + p.name;
    raise(ErrorClass::Input, label() + " has no parameter '" + name + "' (it has " + names + ")");
  }

  size_t unbound() const {
    size_t n = 0;
    for (const auto& b : bound_) n += b ? 0 : 1;
    return n;
  }

  std::string unbound_names() const {
    std::string s;
    for (size_t i = 0; i < bound_.size(); ++i)
      if (!bound_[i]) s += (s.empty() ? "" : ", ") + info_->params[i].name;
    return s.empty() ? "none" : s;
  }

  // The DLPack view of `obj` for parameter i (dense_view), checked against the parameter.
  Argument argument(size_t i, nb::object obj) {
    const TensorInfo& p = info_->params[i];
    Argument a;
    switch (dense_view(std::move(obj), prepare_, &a)) {
    case Viewed::Dense:
      break;
    case Viewed::NotAnArray:
      raise(ErrorClass::Input,
            label() + ": input '" + p.name + "' is a " +
                nb::cast<std::string>(nb::str(nb::handle(a.object.type()).attr("__name__"))) +
                ", not an array (expected " + type_text(p) +
                "; pass a NumPy array, a torch tensor or another DLPack producer)");
    case Viewed::NotDense:
      raise(ErrorClass::Input, label() + ": input '" + p.name +
                                   "' is not dense row-major and could not be copied to be");
    }
    // The runtime takes uint8 for bool (the C API's convention); from Python a bool
    // parameter takes bool arrays only, and nothing else takes one.
    if (a.is_bool != (p.dtype == "bool")) {
      std::string actual = a.is_bool ? "bool" : runtime::describe_dtype(a.view.dtype);
      raise(ErrorClass::Input, "input '" + p.name + "' is " + actual + "; expected " +
                                   type_text(p) + (a.is_bool ? "" : " (pass a bool array)"));
    }
    return a;
  }

  std::shared_ptr<const Model> model_;
  const FunctionInfo* info_;
  nb::object prepare_;
  std::vector<std::optional<Argument>> bound_;
};

namespace {

nb::dict describe_tensor(const TensorInfo& t) {
  nb::dict d;
  d["name"] = t.name;
  d["dtype"] = t.dtype;
  d["dims"] = t.dims;
  d["updates_param"] = t.updates_param;
  return d;
}

} // namespace

void bind_models(nb::module_& m) {
  nb::class_<Function>(m, "Function")
      .def("__call__", &Function::call)
      .def("bind", &Function::bind, nb::arg("name"), nb::arg("value").none())
      .def("is_bound", &Function::is_bound)
      .def_prop_ro("name", [](const Function& f) { return f.info().name; })
      .def_prop_ro("device", [](const Function& f) {
        return std::string(runtime::device_kind_name(f.info().device));
      })
      .def_prop_ro("params", [](const Function& f) {
        nb::list l;
        for (const TensorInfo& t : f.info().params) l.append(describe_tensor(t));
        return l;
      })
      .def_prop_ro("outputs", [](const Function& f) {
        nb::list l;
        for (const TensorInfo& t : f.info().outputs) l.append(describe_tensor(t));
        return l;
      })
      .def_prop_ro("where_clauses", [](const Function& f) { return f.info().where_clauses; })
      .def_prop_ro("signature", [](const Function& f) { return signature(f.info()); })
      .def("__repr__", [](const Function& f) { return "<dsc.Function " + signature(f.info()) + ">"; });

  // A loaded `.so`: its functions, each made once and kept.
  struct Library {
    std::shared_ptr<const Model> model;
    nb::object prepare;
  };
  nb::class_<Library>(m, "Library")
      .def("__init__",
           [](Library* self, const std::string& path, nb::object prepare) {
             std::string error;
             std::unique_ptr<Model> model;
             {
               nb::gil_scoped_release released;
               model = runtime::load_shared_library(path, &error);
             }
             if (!model) raise(ErrorClass::Runtime, error);
             new (self) Library{std::shared_ptr<const Model>(std::move(model)), std::move(prepare)};
           })
      .def_prop_ro("function_names",
                   [](const Library& l) {
                     std::vector<std::string> names;
                     for (const FunctionInfo& f : l.model->manifest().functions) names.push_back(f.name);
                     return names;
                   })
      .def("function", [](const Library& l, const std::string& name) {
        const FunctionInfo* info = l.model->manifest().find(name);
        if (!info) raise(ErrorClass::Runtime, "the model has no function '" + name + "'");
        return Function(l.model, info, l.prepare);
      });

  m.def("declare_constant", [](nb::ndarray<nb::ro, nb::device::cpu> a) {
    if (dsc_declare_constant(a.data(), a.nbytes()) != 0) raise(ErrorClass::Runtime, dsc_last_error());
  });
  m.def("release_constant", [](nb::ndarray<nb::ro, nb::device::cpu> a) {
    if (dsc_release_constant(a.data()) != 0) raise(ErrorClass::Runtime, dsc_last_error());
  });
  // A dense copy of an array on "cpu" or "cuda" (the GPU, or the block emulator under
  // DSC_CUDA_EMULATE=1), for callers with no GPU array library of their own: a NumPy array on
  // the host, a DLPack object on the GPU.
  m.def("copy_to", [](nb::object obj, const std::string& device, nb::object prepare) {
    Argument a;
    if (dense_view(std::move(obj), prepare, &a) != Viewed::Dense)
      raise(ErrorClass::Input, "copy_to: the argument is not an array that can be made dense");
    if (device != "cpu" && device != "cuda")
      raise(ErrorClass::Input, "copy_to: the device is \"cpu\" or \"cuda\", not \"" + device + "\"");
    const bool is_bool = a.is_bool;
    std::string error;
    std::optional<runtime::Tensor> copy;
    {
      nb::gil_scoped_release released;
      copy = runtime::cuda::copy_to(a.view, device == "cuda" ? kDLCUDA : kDLCPU, &error);
    }
    if (!copy) raise(ErrorClass::Runtime, "copy_to " + device + ": " + error);
    return wrap(std::move(*copy), is_bool, device == "cpu" ? Framework::NumPy : Framework::None);
  });
  m.def("set_num_threads", [](int n) { dsc_set_num_threads(n); });
  m.def("get_num_threads", [] { return dsc_get_num_threads(); });
  m.def("cuda_available", [] {
    if (dsc_cuda_available() == 0) return std::string();
    return std::string(dsc_last_error());
  });
}

} // namespace dsc::python
