// The description of a fabric's links as wafersim._core.fabric: the router ports, the named
// topologies and routing algorithms, and Topology (bound by keyword) with its link rules and
// dimension-order paths. python/wafersim/layout.py reads all of it from here, so the rules
// are written once, in C++.
#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"
#include "wafersim/errors.hpp"
#include "wafersim/fabric/route_paths.hpp"
#include "wafersim/fabric/topology.hpp"

namespace wafersim::bindings {

using namespace wafersim::fabric;

namespace {

Dir direction_arg(int d) {
  if (d < 0 || d >= kNumDirs) {
    throw ConfigError("direction must be an index 0.." + std::to_string(kNumDirs - 1) +
                      ", got " + std::to_string(d));
  }
  return static_cast<Dir>(d);
}

py::object point_or_none(const Topology& t, int64_t id) {
  if (id < 0) return py::none();
  return py::make_tuple(id / t.cols, id % t.cols);
}

}  // namespace

void bind_topology(py::module_& m) {
  py::list names, opposites, steps;
  for (int i = 0; i < kNumDirs; ++i) {
    const Dir d = static_cast<Dir>(i);
    names.append(dir_name(d));
    opposites.append(static_cast<int>(opposite(d)));
    steps.append(py::make_tuple(drow(d), dcol(d)));
  }
  m.attr("DIRECTIONS") = py::tuple(names);      // router ports, in the order of their index
  m.attr("OPPOSITE") = py::tuple(opposites);    // index of the opposite port (the ramp: itself)
  m.attr("STEPS") = py::tuple(steps);           // (row, col) step; (0, 0) for skip and ramp
  py::dict kinds;
  for (const TopologyKind& k : kTopologyKinds) kinds[k.name] = py::make_tuple(k.diag_ne, k.diag_nw);
  m.attr("TOPOLOGIES") = kinds;                 // name -> (NE/SW family, NW/SE family)
  py::list algorithms;
  for (const char* a : kPacketRoutingNames) algorithms.append(a);
  m.attr("ROUTING_ALGORITHMS") = py::tuple(algorithms);

  py::class_<Topology>(m, "Topology")
      .def(py::init([](int rows, int cols, bool diag_ne, bool diag_nw, int skip, bool loop,
                       int diag_hop_cycles) {
             Topology t;
             t.rows = rows;
             t.cols = cols;
             t.diag_ne = diag_ne;
             t.diag_nw = diag_nw;
             t.skip = skip;
             t.loop = loop;
             t.diag_hop_cycles = diag_hop_cycles;
             t.validate();
             return t;
           }),
           py::kw_only(), py::arg("rows"), py::arg("cols"), py::arg("diag_ne") = false,
           py::arg("diag_nw") = false, py::arg("skip") = 0, py::arg("loop") = false,
           py::arg("diag_hop_cycles") = 1)
      .def_readonly("rows", &Topology::rows)
      .def_readonly("cols", &Topology::cols)
      .def_readonly("diag_ne", &Topology::diag_ne)
      .def_readonly("diag_nw", &Topology::diag_nw)
      .def_readonly("skip", &Topology::skip)
      .def_readonly("loop", &Topology::loop)
      .def_readonly("diag_hop_cycles", &Topology::diag_hop_cycles)
      .def_property_readonly("kind", &Topology::kind_name)
      .def_property_readonly("has_diagonals", &Topology::has_diagonals)
      .def("describe", &Topology::describe)
      .def("family_enabled_at", [](const Topology& t, int d) {
        return t.family_enabled(direction_arg(d));
      })
      .def("hop_cycles_at", [](const Topology& t, int d) { return t.hop_cycles(direction_arg(d)); })
      .def("neighbour_at",  // (row, col) across link d from (r, c), or None
           [](const Topology& t, int r, int c, int d) {
             if (!t.inside(r, c)) return py::object(py::none());
             return point_or_none(t, t.neighbour(r, c, direction_arg(d)));
           })
      .def("link_ports_at",
           [](const Topology& t, int r, int c) { return t.inside(r, c) ? t.link_ports(r, c) : 0; })
      .def("edge_port_at",  // ((row, col), direction index) of an edge port, or None
           [](const Topology& t, int64_t r, int64_t c) -> py::object {
             const auto e = t.edge_port(r, c);
             if (!e) return py::none();
             return py::make_tuple(point_or_none(t, e->first), static_cast<int>(e->second));
           })
      .def("link_direction",  // index of the link from a to b, or None
           [](const Topology& t, int r0, int c0, int r1, int c1) -> py::object {
             if (!t.inside(r0, c0)) return py::none();
             const auto d = t.link_between(r0, c0, r1, c1);
             if (!d) return py::none();
             return py::int_(static_cast<int>(*d));
           })
      .def("dimension_order_path",
           [](const Topology& t, int64_t r0, int64_t c0, int64_t r1, int64_t c1,
              const std::string& algorithm) {
             py::list out;
             for (const Point& p : dimension_order_path(t, routing_named(algorithm, "algorithm"),
                                                        {r0, c0}, {r1, c1})) {
               out.append(py::make_tuple(p.row, p.col));
             }
             return out;
           },
           py::arg("r0"), py::arg("c0"), py::arg("r1"), py::arg("c1"), py::arg("algorithm"));
}

}  // namespace wafersim::bindings
