// Latency counters (fabric::LatencyCounts) as wafersim._core.fabric.LatencyCounts: a run's
// counts stay in C++ until Python asks for them (python/wafersim/stats.py), and the stamp
// rules of fabric/wavelet.hpp, so tests can reach latencies past 2^32 cycles without
// running that long.
#include <pybind11/numpy.h>
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "wafersim/errors.hpp"
#include "wafersim/fabric/latency_counts.hpp"
#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::bindings {

using fabric::LatencyCounts;

namespace {

size_t bin_arg(int64_t bin) {
  if (bin < 0 || bin >= static_cast<int64_t>(LatencyCounts::kMaxBins)) {
    throw ConfigError("bin must be in 0.." + std::to_string(LatencyCounts::kMaxBins - 1) +
                      ", got " + std::to_string(bin));
  }
  return static_cast<size_t>(bin);
}

// Lowest and highest latency of bins 0..n-1.
py::tuple bin_edges(size_t n) {
  CArray<uint64_t> low(static_cast<py::ssize_t>(n)), high(static_cast<py::ssize_t>(n));
  for (size_t i = 0; i < n; ++i) {
    low.mutable_data()[i] = LatencyCounts::bin_low(i);
    high.mutable_data()[i] = LatencyCounts::bin_high(i);
  }
  return py::make_tuple(low, high);
}

}  // namespace

void bind_latency(py::module_& m) {
  py::class_<LatencyCounts>(m, "LatencyCounts")
      .def(py::init<>())
      .def(py::self == py::self)
      .def_readonly_static("EXACT", &LatencyCounts::kExact)
      .def_readonly_static("SUB_BINS", &LatencyCounts::kSubBins)
      .def("add", &LatencyCounts::add, py::arg("latency"), py::arg("n") = 1)
      .def("merge", &LatencyCounts::merge)
      .def(py::pickle(
          [](const LatencyCounts& c) {
            return py::make_tuple(c.bins(), c.count(), c.max(), c.sum_lo(), c.sum_hi());
          },
          [](const py::tuple& t) {
            if (t.size() != 5) throw ConfigError("LatencyCounts: a state of 5 fields");
            return LatencyCounts::from_parts(t[0].cast<std::vector<uint64_t>>(),
                                             t[1].cast<uint64_t>(), t[2].cast<uint64_t>(),
                                             t[3].cast<uint64_t>(), t[4].cast<uint64_t>());
          }))
      .def_property_readonly("count", &LatencyCounts::count)
      .def_property_readonly("max", &LatencyCounts::max)
      .def_property_readonly("sum",
                             [](const LatencyCounts& c) {
                               return (py::int_(c.sum_hi()).attr("__lshift__")(64))
                                   .attr("__or__")(py::int_(c.sum_lo()));
                             })
      .def_property_readonly("nbins", [](const LatencyCounts& c) { return c.bins().size(); })
      .def("bins", [](const LatencyCounts& c) { return to_numpy(c.bins()); },
           "counts per bin, up to the highest bin used (a copy)")
      .def_static("bin_of", &LatencyCounts::bin_of, py::arg("latency"))
      .def_static("bin_low", [](int64_t b) { return LatencyCounts::bin_low(bin_arg(b)); })
      .def_static("bin_high", [](int64_t b) { return LatencyCounts::bin_high(bin_arg(b)); })
      .def_static("edges",
                  [](int64_t n) { return bin_edges(n == 0 ? 0 : bin_arg(n - 1) + 1); },
                  py::arg("n"), "(low, high) latencies of bins 0..n-1");
  m.attr("MAX_STAMPED_WAIT") = fabric::kMaxStampedWait;
  m.def("entry_stamp", &fabric::entry_stamp, py::arg("release"), py::arg("entry"),
        "the latency stamp of a wavelet released at `release` that enters at `entry`");
  m.def("latency_since", &fabric::latency_since, py::arg("stamp"), py::arg("cycle"),
        "the latency a delivery at `cycle` counts from a stamp");
}

}  // namespace wafersim::bindings
