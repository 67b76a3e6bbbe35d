// One bind_* function per area of the core; module.cpp calls them all.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace wafersim::pe {
struct CeStats;
}
namespace wafersim::tensor {
struct TensorUnitConfig;
}

namespace wafersim::bindings {

namespace py = pybind11;

void bind_errors(py::module_& m);
void bind_fabric(py::module_& m);
void bind_topology(py::module_& fabric);  // called by bind_fabric on its submodule
void bind_latency(py::module_& fabric);  // called by bind_fabric on its submodule
void bind_info(py::module_& m);
void bind_numerics(py::module_& m);
void bind_tensor(py::module_& m);
void bind_pe(py::module_& m);
void bind_wafer_pe(py::module_& m);  // after bind_pe and bind_fabric: extends fabric.Wafer
void bind_domain(py::module_& m);  // after bind_wafer_pe: extends fabric.Wafer

// A compute element's statistics as a dict (bind_pe.cpp; the wafer reports them too).
py::dict ce_stats_dict(const pe::CeStats& s);
// A tensor unit's configuration from Python's values (bind_tensor.cpp; ConfigError on bad names).
tensor::TensorUnitConfig tensor_unit_config(int rows, int cols, int lanes, const std::string& dtype,
                                            bool weight_signed, bool data_signed,
                                            int input_queue_rows, int sram_bytes,
                                            const std::string& pipeline, const std::string& mode);

}  // namespace wafersim::bindings
