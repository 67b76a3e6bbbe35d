#include "wafersim/sim/wafer.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/fabric/route_check.hpp"

namespace wafersim::sim {

using namespace wafersim::fabric;

namespace {

uint64_t port_key(uint32_t router, Dir port) { return uint64_t{router} * 16 + port; }

}  // namespace

Wafer::Wafer(const WaferConfig& config) : fabric_(config.fabric), sim_(fabric_) {
  sim_.set_threads(config.threads);
  sim_.set_watchdog(config.watchdog);
  if (fabric_.config().packet_mode) {
    // Any router can be a destination: every ramp gets a host port.
    for (uint32_t id = 0; id < fabric_.router_count(); ++id) host_port(id, kRamp);
  }
}

HostPort& Wafer::host_port(uint32_t router, Dir port) {
  const uint64_t key = port_key(router, port);
  auto it = host_ports_.find(key);
  if (it != host_ports_.end()) return *it->second;
  if (fabric_.endpoint(router, port) != nullptr) {
    throw ConfigError("router " + router_name(fabric_.topology(), router) + " port " +
                      dir_name(port) + " already has an endpoint that is not a host port" +
                      (port == kRamp ? " (the PE's compute element: send from its program, "
                                       "or inject through an edge port)"
                                     : ""));
  }
  auto hp = std::make_unique<HostPort>(router, port);
  fabric_.attach(router, port, hp.get());
  return *host_ports_.emplace(key, std::move(hp)).first->second;
}

void Wafer::check_routes() {
  fabric::check_routes(fabric_);
  attach_endpoints();
  checked_version_ = fabric_.routes_version();
}

void Wafer::attach_endpoints() {
  if (fabric_.config().packet_mode) return;
  // Every ramp or edge port a route uses needs an endpoint; the host's by default.
  const Topology& t = fabric_.topology();
  for (uint32_t id = 0; id < fabric_.router_count(); ++id) {
    const Router& rt = fabric_.router(id);
    if (rt.keys == 0) continue;
    const int r = static_cast<int>(id / static_cast<uint32_t>(t.cols));
    const int c = static_cast<int>(id % static_cast<uint32_t>(t.cols));
    DirMask used = 0;
    fabric_.for_each_slot(id, [&](const QueueSlot& s) {
      const auto [dest, src] = fabric_.route_union(id, s.key);  // any switch position
      used |= dest | src;
    });
    for (DirMask m = used; m; m &= m - 1) {
      const Dir d = first_dir(m);
      if ((d == kRamp || t.is_edge(r, c, d)) && fabric_.endpoint(id, d) == nullptr) {
        host_port(id, d);
      }
    }
  }
}

void Wafer::prepare() {
  if (checked_version_ != fabric_.routes_version()) check_routes();
  if (fabric_.config().packet_mode) return;
  // Wavelets waiting at a host port need a route that takes their color from that port.
  for (const auto& [key, port] : host_ports_) {
    const ColorMask waiting = port->pending_colors();
    for (ColorMask m = waiting; m; m &= m - 1) {
      const int color = std::countr_zero(m);
      if (!(fabric_.route_union(port->router(), color).second & bit(port->port()))) {
        throw RouteError("wavelets of color " + std::to_string(color) + " wait at the " +
                         (port->port() == kRamp ? std::string("ramp")
                                                : std::string("edge port ") +
                                                      dir_name(port->port())) +
                         " of router " + router_name(fabric_.topology(), port->router()) +
                         ", but color " + std::to_string(color) +
                         " has no route from there (its Src lacks " + dir_name(port->port()) +
                         ")");
      }
    }
  }
}

void Wafer::inject(const InjectBatch& b) {
  const size_t n = b.router.size();
  if (b.port.size() != n || b.color.size() != n || b.data.size() != n || b.index.size() != n ||
      b.ctrl.size() != n || b.release.size() != n) {
    throw ConfigError("inject: all columns must have the same length");
  }
  const bool packet = fabric_.config().packet_mode;
  if (packet && b.dest.size() != n) {
    throw ConfigError("inject: packet mode needs a destination for every wavelet (dest)");
  }
  if (!packet && !b.dest.empty()) {
    throw ConfigError("inject: dest is only for packet mode; color routes steer wavelets here");
  }
  const Topology& t = fabric_.topology();
  // Validate everything first, so a bad row injects nothing.
  for (size_t i = 0; i < n; ++i) {
    auto row = [i] { return "inject row " + std::to_string(i) + ": "; };
    if (b.router[i] >= fabric_.router_count()) {
      throw ConfigError(row() + "router id " + std::to_string(b.router[i]) + " is outside the " +
                        t.describe());
    }
    const Dir port = static_cast<Dir>(b.port[i]);
    const int r = static_cast<int>(b.router[i] / static_cast<uint32_t>(t.cols));
    const int c = static_cast<int>(b.router[i] % static_cast<uint32_t>(t.cols));
    if (b.port[i] >= kNumDirs || (port != kRamp && !t.is_edge(r, c, port))) {
      throw RouteError(row() + "router " + router_name(t, b.router[i]) + " has no edge port " +
                       (b.port[i] < kNumDirs ? dir_name(port) : "?") +
                       " (edge ports are N/S/E/W couplings on the border without a neighbour)");
    }
    if (port == kRamp && ces_.count(b.router[i])) {
      throw ConfigError(row() + "PE " + router_name(t, b.router[i]) +
                        " has a compute element on its ramp: inject through an edge port, or "
                        "send from its program");
    }
    if (b.color[i] >= fabric_.config().colors) {
      throw ConfigError(row() + "color " + std::to_string(b.color[i]) +
                        " is not a fabric color (0.." +
                        std::to_string(fabric_.config().colors - 1) + ")");
    }
    if (b.ctrl[i] > 1) throw ConfigError(row() + "ctrl must be 0 or 1");
    if (packet) {
      if (port != kRamp) throw ConfigError(row() + "packet mode injects at ramps only");
      if (b.dest[i] >= fabric_.router_count()) {
        throw ConfigError(row() + "dest router id " + std::to_string(b.dest[i]) +
                          " is outside the " + t.describe());
      }
    }
  }
  const uint64_t now = sim_.cycle();
  // Inject in release order so each port's color FIFO stays sorted without searching.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t z) { return b.release[a] < b.release[z]; });
  for (size_t i : order) {
    Wavelet w;
    w.data = b.data[i];
    w.index = b.index[i];
    w.color = b.color[i];
    w.ctrl = b.ctrl[i] != 0;
    if (packet) {
      const int cols = fabric_.cols();
      w.dest = pack_dest(static_cast<int>(b.dest[i]) / cols, static_cast<int>(b.dest[i]) % cols);
    }
    const uint64_t release =
        b.release[i] < 0 ? now : std::max<uint64_t>(now, static_cast<uint64_t>(b.release[i]));
    host_port(b.router[i], static_cast<Dir>(b.port[i])).push(w, release);
  }
}

void Wafer::set_sink(uint32_t router, Dir port, uint32_t capacity, uint32_t drain_period) {
  const Topology& t = fabric_.topology();
  if (router >= fabric_.router_count()) {
    throw ConfigError("router id " + std::to_string(router) + " is outside the " + t.describe());
  }
  const int r = static_cast<int>(router / static_cast<uint32_t>(t.cols));
  const int c = static_cast<int>(router % static_cast<uint32_t>(t.cols));
  if (port != kRamp && !t.is_edge(r, c, port)) {
    throw RouteError("router " + router_name(t, router) + " has no edge port " + dir_name(port));
  }
  if (drain_period > 0 && capacity == 0) {
    throw ConfigError("drain_period needs a capacity (an unlimited sink never fills)");
  }
  host_port(router, port).set_sink(capacity, drain_period);
  fabric_.latch_endpoint_stalls();
}

Collected Wafer::collect(int64_t router, int port) {
  std::vector<std::pair<const HostPort*, Arrival>> all;
  for (auto& [key, hp] : host_ports_) {
    if (router >= 0 && (hp->router() != router || hp->port() != port)) continue;
    for (const Arrival& a : hp->take()) all.emplace_back(hp.get(), a);
  }
  fabric_.latch_endpoint_stalls();  // emptied sinks no longer stall
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& z) { return a.second.cycle < z.second.cycle; });
  Collected out;
  const size_t n = all.size();
  out.router.reserve(n);
  for (const auto& [hp, a] : all) {
    out.router.push_back(hp->router());
    out.port.push_back(hp->port());
    out.color.push_back(a.wavelet.color);
    out.data.push_back(a.wavelet.data);
    out.index.push_back(a.wavelet.index);
    out.ctrl.push_back(a.wavelet.ctrl ? 1 : 0);
    out.hops.push_back(a.wavelet.hops);
    // The stamp holds the low 32 bits; rebuild the full cycle from the arrival.
    out.injected.push_back(a.cycle - latency_since(a.wavelet.injected_cycle, a.cycle));
    out.arrived.push_back(a.cycle);
  }
  return out;
}

uint64_t Wafer::pending_injections() const {
  uint64_t n = 0;
  for (const auto& [key, hp] : host_ports_) n += hp->pending();
  return n;
}

RunResult Wafer::run(uint64_t max_cycles) {
  start_run(max_cycles);
  sim_.advance(Simulator::Clock::time_point::max());
  return finish_run();
}

void Wafer::start_run(uint64_t max_cycles) {
  sim_.check_can_run();  // before touching anything a paused run still uses
  prepare();
  fabric_.compact_queues();
  mark_ce_stats();
  // A run that ended in an error left its waits behind: this run counts its own.
  LatencyCounts stale;
  for (auto& [key, hp] : host_ports_) hp->take_waits(stale);
  sim_.start_run(max_cycles);
}

RunResult Wafer::finish_run() {
  RunResult result = sim_.finish_run();
  for (auto& [key, hp] : host_ports_) hp->take_waits(result.queue_delay);
  return result;
}

void Wafer::reset_counters() {
  fabric_.reset_counters();
  counters_since_ = sim_.cycle();
}

}  // namespace wafersim::sim
