#pragma once
// dsc's exception classes (tools/python/dsc/errors.py), which dsc/__init__.py hands to the
// extension once at import, and raising them from C++.

#include <nanobind/nanobind.h>

#include <string>

namespace dsc::python {

enum class ErrorClass { Compile, Shape, Input, Runtime };

// Stores the classes: compile, shape, input, runtime (in that order).
void set_error_classes(nanobind::handle compile, nanobind::handle shape, nanobind::handle input,
                       nanobind::handle runtime);

// Raises `cls` with `message` (throws nanobind::python_error). Before set_error_classes, the
// builtin RuntimeError.
[[noreturn]] void raise(ErrorClass cls, const std::string& message);

} // namespace dsc::python
