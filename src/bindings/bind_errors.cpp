// Translates the core's C++ exceptions into the classes of wafersim.errors, keeping the
// message, the category and (for deadlocks) the report.
#include <exception>

#include "bindings.hpp"
#include "wafersim/errors.hpp"

namespace wafersim::bindings {

namespace {

void raise_as(const char* class_name, const WaferError& e, const py::dict& extra = {}) {
  py::object type = py::module_::import("wafersim.errors").attr(class_name);
  py::object instance = type(e.what(), py::arg("category") = category_name(e.category()),
                             **extra);
  PyErr_SetObject(type.ptr(), instance.ptr());
}

}  // namespace

void bind_errors(py::module_&) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const DeadlockError& e) {
      py::dict extra;
      extra["report"] = e.report();
      raise_as("DeadlockError", e, extra);
    } catch (const ConfigError& e) {
      raise_as("ConfigError", e);
    } catch (const ProgramError& e) {
      raise_as("ProgramError", e);
    } catch (const MemoryAccessError& e) {
      raise_as("MemoryAccessError", e);
    } catch (const RouteError& e) {
      raise_as("RouteError", e);
    } catch (const WaferError& e) {
      raise_as("WaferError", e);
    }
  });
}

}  // namespace wafersim::bindings
