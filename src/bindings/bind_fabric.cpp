// The fabric and its cycle loop as wafersim._core.fabric. Arrays arrive C-contiguous with
// the exact dtype (python/wafersim/wafer.py prepares them); results leave as new arrays.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "wafersim/errors.hpp"
#include "wafersim/sim/counters.hpp"
#include "wafersim/sim/wafer.hpp"

namespace wafersim::bindings {

using namespace wafersim::fabric;
using sim::Wafer;

namespace {

SchedulerPolicy scheduler_named(const std::string& s) {
  if (s == "round_robin") return SchedulerPolicy::round_robin;
  if (s == "priority") return SchedulerPolicy::priority;
  throw ConfigError("scheduler must be 'round_robin' or 'priority', got '" + s + "'");
}

Dir port_arg(int port) {
  if (port < 0 || port >= kNumDirs) {
    throw ConfigError("port must be a direction index 0.." + std::to_string(kNumDirs - 1) +
                      ", got " + std::to_string(port));
  }
  return static_cast<Dir>(port);
}

uint32_t router_arg(const Wafer& w, int64_t id) {
  if (id < 0 || id >= static_cast<int64_t>(w.fabric().router_count())) {
    throw ConfigError("router id " + std::to_string(id) + " is outside the " +
                      w.fabric().topology().describe());
  }
  return static_cast<uint32_t>(id);
}

std::unique_ptr<Wafer> make_wafer(const Topology& topology, int colors, int queue_depth,
                                  const std::string& scheduler, int priority_split,
                                  bool packet_mode,
                                  const std::optional<std::string>& packet_routing, int threads,
                                  uint64_t watchdog) {
  sim::WaferConfig cfg;
  cfg.fabric.topology = topology;
  cfg.fabric.colors = colors;
  cfg.fabric.queue_depth = queue_depth;
  cfg.fabric.scheduler = scheduler_named(scheduler);
  cfg.fabric.priority_split = priority_split;
  cfg.fabric.packet_mode = packet_mode;
  // Without a name: diagonal-first where the fabric has diagonals, else XY.
  cfg.fabric.packet_routing =
      packet_routing ? routing_named(*packet_routing, "packet_routing")
                     : (topology.has_diagonals() ? PacketRouting::diag_first : PacketRouting::xy);
  cfg.threads = threads;
  cfg.watchdog = watchdog;
  return std::make_unique<Wafer>(cfg);
}

std::vector<Point> points_arg(const CArray<int64_t>& a, const char* name) {
  if (a.ndim() != 2 || a.shape(1) != 2) {
    throw ConfigError(std::string(name) + " must be an (n, 2) array of (row, col) points");
  }
  std::vector<Point> out(static_cast<size_t>(a.shape(0)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = {a.data()[2 * i], a.data()[2 * i + 1]};
  return out;
}

py::dict run_result(sim::RunResult&& r) {
  py::dict d;
  d["start_cycle"] = r.start_cycle;
  d["cycles"] = r.cycles;
  d["quiescent"] = r.quiescent;
  d["moves"] = r.moves;
  d["injected"] = r.injected;
  d["delivered"] = r.delivered;
  d["router_cycles"] = r.router_cycles;
  d["parallel_phases"] = r.parallel_phases;
  d["slept_cycles"] = r.slept_cycles;
  // Moved, not copied: Python reads the latency counts only when asked.
  d["latency"] = py::cast(std::move(r.latency));
  d["queue_delay"] = py::cast(std::move(r.queue_delay));
  d["hop_hist"] = to_numpy(r.hop_hist);
  return d;
}

py::dict collected(const sim::Collected& c) {
  py::dict d;
  d["router"] = to_numpy(c.router);
  d["port"] = to_numpy(c.port);
  d["color"] = to_numpy(c.color);
  d["data"] = to_numpy(c.data);
  d["index"] = to_numpy(c.index);
  d["ctrl"] = to_numpy(c.ctrl);
  d["hops"] = to_numpy(c.hops);
  d["injected"] = to_numpy(c.injected);
  d["arrived"] = to_numpy(c.arrived);
  return d;
}

}  // namespace

void bind_fabric(py::module_& root) {
  py::module_ m = root.def_submodule("fabric", "routers, links, host ports and the cycle loop");
  bind_topology(m);
  bind_latency(m);

  py::class_<Wafer>(m, "Wafer")
      .def(py::init(&make_wafer), py::arg("topology"), py::kw_only(), py::arg("colors"),
           py::arg("queue_depth"), py::arg("scheduler"), py::arg("priority_split"),
           py::arg("packet_mode"), py::arg("packet_routing") = py::none(), py::arg("threads"),
           py::arg("watchdog"))
      .def_property_readonly("topology", [](const Wafer& w) { return w.fabric().topology(); })
      .def_property_readonly("packet_routing", [](const Wafer& w) -> py::object {
        const FabricConfig& c = w.fabric().config();
        if (!c.packet_mode) return py::none();
        return py::str(routing_name(c.packet_routing));
      })
      // routes
      .def("set_route",
           [](Wafer& w, int64_t id, int color, DirMask dest, DirMask src) {
             w.fabric().set_route(router_arg(w, id), color, dest, src);
           })
      .def("add_routes",  // masks per router id, all or none (Fabric::add_routes)
           [](Wafer& w, int color, const CArray<uint32_t>& ids, const CArray<uint16_t>& dest,
              const CArray<uint16_t>& src, bool allow_shared_source) {
             if (ids.size() != dest.size() || ids.size() != src.size()) {
               throw ConfigError("add_routes: ids, dest and src must have the same length");
             }
             RouteMasks masks;
             for (py::ssize_t i = 0; i < ids.size(); ++i) {
               RouterMasks& m = masks.at(router_arg(w, ids.data()[i]));
               m.dest |= dest.data()[i];
               m.src |= src.data()[i];
             }
             w.fabric().add_routes(color, masks, allow_shared_source);
           },
           py::arg("color"), py::arg("ids").noconvert(), py::arg("dest").noconvert(),
           py::arg("src").noconvert(), py::kw_only(), py::arg("allow_shared_source"))
      .def("route_path",  // a path of adjacent routers (route_paths.hpp), then add_routes
           [](Wafer& w, int color, const CArray<int64_t>& points, bool allow_shared_source) {
             const std::vector<Point> pts = points_arg(points, "path");
             w.fabric().add_routes(color, path_route(w.fabric().topology(), color, pts),
                                   allow_shared_source);
           },
           py::arg("color"), py::arg("points").noconvert(), py::kw_only(),
           py::arg("allow_shared_source"))
      .def("route_tree",  // a multicast tree of dimension-order branches [0301]
           [](Wafer& w, int color, int64_t src_row, int64_t src_col, const CArray<int64_t>& dsts,
              const std::string& algorithm) {
             const std::vector<Point> to = points_arg(dsts, "dsts");
             w.fabric().add_routes(color,
                                   tree_route(w.fabric().topology(), color, {src_row, src_col},
                                              to, routing_named(algorithm, "algorithm")),
                                   false);
           },
           py::arg("color"), py::arg("src_row"), py::arg("src_col"), py::arg("dsts").noconvert(),
           py::arg("algorithm"))
      .def("routed_colors",  // bit k: color k has a route at one of the routers
           [](const Wafer& w, const CArray<uint32_t>& ids) {
             return w.fabric().routed_colors(view(ids));
           },
           py::arg("ids").noconvert())
      .def("route",
           [](const Wafer& w, int64_t id, int color) {
             return w.fabric().route(router_arg(w, id), color);
           })
      .def("clear_routes", [](Wafer& w, int color) { w.fabric().clear_routes(color); })
      // runtime switches: position i+1 sets Src (rx[i] = 1) or Dest (rx[i] = 0) to masks[i]
      .def("set_switch",
           [](Wafer& w, int64_t id, int color, const CArray<uint8_t>& rx,
              const CArray<uint16_t>& masks, bool ring, int start) {
             if (rx.size() != masks.size()) {
               throw ConfigError("set_switch: rx and masks must have the same length");
             }
             std::vector<SwitchPosition> pos(static_cast<size_t>(rx.size()));
             for (size_t i = 0; i < pos.size(); ++i) pos[i] = {rx.data()[i] != 0, masks.data()[i]};
             w.fabric().set_switch(router_arg(w, id), color, pos, ring, start);
           },
           py::arg("id"), py::arg("color"), py::arg("rx").noconvert(),
           py::arg("masks").noconvert(), py::arg("ring"), py::arg("start"))
      .def("clear_switch",
           [](Wafer& w, int64_t id, int color) {
             w.fabric().clear_switch(router_arg(w, id), color);
           })
      .def("switch_state",
           [](const Wafer& w, int64_t id, int color) -> py::object {
             const RouteSwitch* sw = w.fabric().route_switch(router_arg(w, id), color);
             if (sw == nullptr) return py::none();
             py::dict d;
             py::list rx, masks, dest, src;
             for (int p = 0; p < sw->last; ++p) {
               rx.append(sw->positions[static_cast<size_t>(p)].rx);
               masks.append(sw->positions[static_cast<size_t>(p)].mask);
             }
             for (int p = 0; p <= sw->last; ++p) {
               dest.append(sw->dest[static_cast<size_t>(p)]);
               src.append(sw->src[static_cast<size_t>(p)]);
             }
             d["rx"] = rx;
             d["masks"] = masks;
             d["dest"] = dest;
             d["src"] = src;
             d["ring"] = sw->ring;
             d["start"] = sw->start;
             d["position"] = sw->pos_out;
             d["arrival_position"] = sw->pos_in;
             d["held"] = w.fabric().slot(router_arg(w, id), static_cast<unsigned>(color)).hold;
             return d;
           })
      .def("check_routes", &Wafer::check_routes)
      // host I/O
      .def("inject",
           [](Wafer& w, const CArray<uint32_t>& router, const CArray<uint8_t>& port,
              const CArray<uint8_t>& color, const CArray<uint32_t>& data,
              const CArray<uint16_t>& index, const CArray<uint8_t>& ctrl,
              const CArray<int64_t>& release, std::optional<CArray<uint32_t>> dest) {
             sim::InjectBatch b{view(router), view(port),  view(color), view(data),
                                view(index),  view(ctrl),  view(release), {}};
             if (dest) b.dest = view(*dest);
             w.inject(b);
           },
           py::arg("router").noconvert(), py::arg("port").noconvert(),
           py::arg("color").noconvert(), py::arg("data").noconvert(),
           py::arg("index").noconvert(), py::arg("ctrl").noconvert(),
           py::arg("release").noconvert(), py::arg("dest").noconvert() = py::none())
      .def("set_sink",
           [](Wafer& w, int64_t id, int port, uint32_t capacity, uint32_t drain_period) {
             w.set_sink(router_arg(w, id), port_arg(port), capacity, drain_period);
           })
      .def("collect", [](Wafer& w, int64_t router, int port) {
        return collected(w.collect(router, port));
      })
      .def_property_readonly("pending_injections", &Wafer::pending_injections)
      // host streams into and out of compute elements
      .def("feed_ces",
           [](Wafer& w, const CArray<uint32_t>& ids, int color, const CArray<uint32_t>& data,
              const CArray<uint16_t>& index, const CArray<uint8_t>& ctrl) {
             w.feed_ces(view(ids), color, view(data), view(index), view(ctrl));
           },
           py::arg("ids").noconvert(), py::arg("color"), py::arg("data").noconvert(),
           py::arg("index").noconvert(), py::arg("ctrl").noconvert())
      .def("set_ce_capture",
           [](Wafer& w, const CArray<uint32_t>& ids, int color, bool on) {
             w.set_ce_capture(view(ids), color, on);
           },
           py::arg("ids").noconvert(), py::arg("color"), py::arg("on"))
      .def("captured",
           [](Wafer& w, const CArray<uint32_t>& ids, int color, bool take) {
             return collected(w.captured(view(ids), color, take));
           },
           py::arg("ids").noconvert(), py::arg("color"), py::arg("take"))
      // running
      .def("set_packet_bit_planes",
           [](Wafer& w, bool on) { return w.fabric().set_packet_bit_planes(on); },
           "Packet mode: run on the bit-plane pass where it applies (the default), or on the "
           "general pass. Same results; for tests that compare the two. Returns whether the "
           "bit-plane pass is now in use.")
      .def("run",
           [](Wafer& w, uint64_t max_cycles, double check_seconds) {
             // The run pauses every check_seconds of wall time so that Python's signal
             // handlers (Ctrl-C) run; a handler's exception ends the run at that cycle.
             using Clock = sim::Simulator::Clock;
             if (!(check_seconds >= 0 && check_seconds <= 3600)) {
               throw ConfigError("check_seconds must be in 0..3600, got " +
                                 std::to_string(check_seconds));
             }
             const auto slice = std::chrono::duration_cast<Clock::duration>(
                 std::chrono::duration<double>(check_seconds));
             w.start_run(max_cycles);
             for (;;) {
               bool done;
               {
                 py::gil_scoped_release release;
                 done = w.simulator().advance(Clock::now() + slice);
               }
               if (done) break;
               if (PyErr_CheckSignals() != 0) {
                 w.finish_run();
                 throw py::error_already_set();
               }
             }
             return run_result(w.finish_run());
           },
           py::arg("max_cycles"), py::arg("check_seconds") = 0.1)
      .def_property_readonly("cycle", [](Wafer& w) { return w.simulator().cycle(); })
      .def_property_readonly("queued", [](Wafer& w) { return w.simulator().queued(); })
      .def_property_readonly("broken", [](Wafer& w) { return w.simulator().broken(); })
      .def_property(
          "threads", [](Wafer& w) { return w.simulator().threads(); },
          [](Wafer& w, int n) { w.simulator().set_threads(n); })
      .def_property(
          "watchdog", [](Wafer& w) { return w.simulator().watchdog(); },
          [](Wafer& w, uint64_t n) { w.simulator().set_watchdog(n); })
      .def_property_readonly("capacity", [](Wafer& w) { return w.fabric().capacity(); })
      .def_property_readonly("stall_threshold",
                             [](Wafer& w) { return w.fabric().stall_threshold(); })
      // inspection
      .def("router_state",
           [](Wafer& w, int64_t id) {
             const uint32_t rid = router_arg(w, id);
             const Router& rt = w.fabric().router(rid);
             py::dict d;
             py::dict occupancy;
             w.fabric().for_each_slot(
                 rid, [&](const QueueSlot& s) { occupancy[py::int_(s.key)] = s.count; });
             d["occupancy"] = occupancy;
             d["stall_out"] = w.fabric().stall_out(rid);
             d["queued"] = rt.queued;
             d["ramp_stall_in"] = rt.ramp.stall_in;
             return d;
           })
      .def("queue",
           [](Wafer& w, int64_t id, int key) {
             if (key < 0 || key >= kMaxColorIds) {
               throw ConfigError("color must be in 0..63, got " + std::to_string(key));
             }
             py::list out;
             for (const Wavelet& x : w.fabric().queue_contents(router_arg(w, id), key)) {
               out.append(py::make_tuple(x.color, x.ctrl, x.index, x.data));
             }
             return out;
           })
      // counters
      .def("link_counts",
           [](Wafer& w) {
             const auto& t = w.fabric().topology();
             CArray<uint64_t> out({t.rows, t.cols, kNumDirs});
             sim::fill_link_counts(w.fabric(), out.mutable_data());
             return out;
           })
      .def("router_traversals",
           [](Wafer& w) {
             const auto& t = w.fabric().topology();
             CArray<uint64_t> out({t.rows, t.cols});
             sim::fill_router_traversals(w.fabric(), out.mutable_data());
             return out;
           })
      .def("occupancy",
           [](Wafer& w) {
             const auto& t = w.fabric().topology();
             CArray<uint64_t> sum({t.rows, t.cols});
             CArray<uint32_t> mx({t.rows, t.cols});
             sim::fill_occupancy(w.fabric(), sum.mutable_data(), mx.mutable_data());
             return py::make_tuple(sum, mx);
           })
      .def("color_traffic",
           [](Wafer& w) {
             const sim::ColorTraffic c = sim::color_traffic(w.fabric());
             py::dict d;
             d["router"] = to_numpy(c.router);
             d["dir"] = to_numpy(c.dir);
             d["color"] = to_numpy(c.color);
             d["count"] = to_numpy(c.count);
             return d;
           })
      .def("reset_counters", &Wafer::reset_counters)
      .def_property_readonly("counters_since", &Wafer::counters_since);
}

}  // namespace wafersim::bindings
