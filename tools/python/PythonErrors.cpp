#include "tools/python/PythonErrors.h"

namespace nb = nanobind;

namespace dsc::python {

namespace {

// Strong references, kept for the life of the interpreter (the module never unloads them).
PyObject* classes[4] = {nullptr, nullptr, nullptr, nullptr};

} // namespace

void set_error_classes(nb::handle compile, nb::handle shape, nb::handle input, nb::handle runtime) {
  nb::handle given[4] = {compile, shape, input, runtime};
  for (int i = 0; i < 4; ++i) {
    if (!PyType_Check(given[i].ptr()) ||
        !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(given[i].ptr()),
                          reinterpret_cast<PyTypeObject*>(PyExc_Exception)))
      throw nb::type_error("_set_error_classes takes four exception classes");
    Py_XDECREF(classes[i]);
    classes[i] = given[i].inc_ref().ptr();
  }
}

void raise(ErrorClass cls, const std::string& message) {
  PyObject* type = classes[static_cast<int>(cls)];
  PyErr_SetString(type ? type : PyExc_RuntimeError, message.c_str());
  throw nb::python_error();
}

} // namespace dsc::python
