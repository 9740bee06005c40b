// The extension module `dsc._dsc`: the compiler in process (InProcessCompiler.h) and the
// runtime (ModelBindings.h). The Python API over it is tools/python/dsc/; nothing here is
// meant to be called by users directly.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "backends/cuda/CudaHostDevice.h"
#include "tools/python/InProcessCompiler.h"
#include "tools/python/ModelBindings.h"
#include "tools/python/PythonErrors.h"

namespace nb = nanobind;
using namespace dsc::python;

namespace {

Source source_of(std::optional<std::string> text, std::string name) {
  return Source{std::move(text), std::move(name)};
}

// Runs `work` without the GIL, so other Python threads run meanwhile; a CompileFailure
// becomes dsc.CompileError.
template <typename Work> auto compiling(Work work) {
  std::optional<std::string> failure;
  decltype(work()) result{};
  {
    nb::gil_scoped_release released;
    try {
      result = work();
    } catch (const CompileFailure& e) {
      failure = e.what();
    }
  }
  if (failure) raise(ErrorClass::Compile, *failure);
  return result;
}

} // namespace

NB_MODULE(_dsc, m) {
  m.doc() = "dsc's compiler and runtime in process (use the `dsc` package, not this module)";
  m.def("_set_error_classes", &set_error_classes);
  dsc::cuda::register_cuda_host_device(); // target="cuda" compiles, as in dscc

  m.def(
      "build_library",
      [](std::optional<std::string> text, std::string name, std::vector<std::string> args,
         std::string out_path) {
        Source s = source_of(std::move(text), std::move(name));
        return compiling([&] { return build_library(s, args, out_path); });
      },
      nb::arg("text").none(), nb::arg("name"), nb::arg("args"), nb::arg("out_path"));
  m.def(
      "print_ir",
      [](std::optional<std::string> text, std::string name, std::vector<std::string> args,
         std::string after) {
        Source s = source_of(std::move(text), std::move(name));
        return compiling([&] { return print_ir(s, args, after); });
      },
      nb::arg("text").none(), nb::arg("name"), nb::arg("args"), nb::arg("after"));
  m.def(
      "check",
      [](std::optional<std::string> text, std::string name) {
        Source s = source_of(std::move(text), std::move(name));
        CheckReport r = compiling([&] { return check(s); });
        return nb::make_tuple(r.shapes, r.facts);
      },
      nb::arg("text").none(), nb::arg("name"));
  m.def(
      "explain_fusion",
      [](std::optional<std::string> text, std::string name, std::string fn) {
        Source s = source_of(std::move(text), std::move(name));
        return compiling([&] { return explain_fusion(s, fn); });
      },
      nb::arg("text").none(), nb::arg("name"), nb::arg("fn"));
  m.def(
      "prove",
      [](std::string fact, std::vector<std::string> assume, unsigned timeout_ms) {
        ProofReport r = compiling([&] { return prove(fact, assume, timeout_ms); });
        return nb::make_tuple(r.verdict, r.counterexample, r.reason);
      },
      nb::arg("fact"), nb::arg("assume"), nb::arg("timeout_ms"));

  bind_models(m);
}
