// Build and runtime facts for `wafersim info`.
#include <omp.h>

#include <string>

#include "bindings.hpp"
#include "wafersim/errors.hpp"

namespace wafersim::bindings {

void bind_info(py::module_& m) {
  m.attr("__version__") = WAFERSIM_VERSION;
  m.def("build_info", [] {
    py::dict d;
    d["version"] = WAFERSIM_VERSION;
    d["compiler"] = WAFERSIM_COMPILER;
    d["cplusplus"] = static_cast<long>(__cplusplus);
    d["openmp"] = static_cast<long>(_OPENMP);
#if defined(__SANITIZE_ADDRESS__)
    d["sanitizers"] = "address,undefined";
#else
    d["sanitizers"] = "none";
#endif
    return d;
  });
  m.def("omp_max_threads", [] { return omp_get_max_threads(); },
        "Threads an OpenMP parallel region would use now (OMP_NUM_THREADS or the core count).");
  m.def("set_omp_threads", [](int n) {
    if (n < 1) throw ConfigError("threads must be >= 1, got " + std::to_string(n));
    omp_set_num_threads(n);
  });
}

}  // namespace wafersim::bindings
