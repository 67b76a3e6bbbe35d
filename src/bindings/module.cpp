#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "wafersim C++ core (private: use the wafersim package)";
  using namespace wafersim::bindings;
  bind_errors(m);
  bind_info(m);
  bind_numerics(m);
  bind_tensor(m);
  bind_pe(m);
  bind_fabric(m);
  bind_wafer_pe(m);
  bind_domain(m);
}
