#pragma once
// _dsc.Library (a built model loaded in this process) and _dsc.Function (one of its entry
// functions, called on DLPack producers without copies), and the runtime's settings.

#include <nanobind/nanobind.h>

namespace dsc::python {

void bind_models(nanobind::module_& m);

} // namespace dsc::python
