// One bind_* function per area of the core; module.cpp calls them all.
#pragma once

#include <pybind11/pybind11.h>

namespace wafersim::bindings {

namespace py = pybind11;

void bind_errors(py::module_& m);
void bind_fabric(py::module_& m);
void bind_info(py::module_& m);
void bind_numerics(py::module_& m);
void bind_tensor(py::module_& m);
void bind_pe(py::module_& m);

}  // namespace wafersim::bindings
