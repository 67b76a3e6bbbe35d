// One bind_* function per area of the core; module.cpp calls them all.
#pragma once

#include <pybind11/pybind11.h>

namespace wafersim::pe {
struct CeStats;
}

namespace wafersim::bindings {

namespace py = pybind11;

void bind_errors(py::module_& m);
void bind_fabric(py::module_& m);
void bind_info(py::module_& m);
void bind_numerics(py::module_& m);
void bind_tensor(py::module_& m);
void bind_pe(py::module_& m);
void bind_wafer_pe(py::module_& m);  // after bind_pe and bind_fabric: extends fabric.Wafer

// A compute element's statistics as a dict (bind_pe.cpp; the wafer reports them too).
py::dict ce_stats_dict(const pe::CeStats& s);

}  // namespace wafersim::bindings
