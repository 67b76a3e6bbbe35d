// Construction, route configuration and endpoint attachment. The per-cycle work is in
// fabric_cycle.cpp.
#include "wafersim/fabric/fabric.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/fabric/host_port.hpp"

namespace wafersim::fabric {

namespace {

constexpr int kMinColors = 8;    // [0292]: 8, 16, 24 or 32 colors
constexpr int kMaxColors = 32;   // a fabric color is 5 bits [0096]
constexpr int kMaxDepth = 64;

uint64_t edge_key(uint32_t id, Dir d) { return uint64_t{id} * 16 + d; }

std::string mask_names(DirMask m) {
  std::string s;
  for (; m; m &= m - 1) {
    if (!s.empty()) s += ",";
    s += dir_name(first_dir(m));
  }
  return s.empty() ? "{}" : "{" + s + "}";
}

// The directions of a mask as a list of names: ['E', 'N'].
std::string mask_list(DirMask m) {
  std::string s;
  for (; m; m &= m - 1) {
    if (!s.empty()) s += ", ";
    s += "'";
    s += dir_name(first_dir(m));
    s += "'";
  }
  return "[" + s + "]";
}

}  // namespace

std::string router_name(const Topology& t, uint32_t id) {
  // Appended piece by piece: g++ 12 warns falsely on `"(" + std::to_string(...)`.
  std::string s = "(";
  s += std::to_string(id / static_cast<uint32_t>(t.cols));
  s += ", ";
  s += std::to_string(id % static_cast<uint32_t>(t.cols));
  s += ")";
  return s;
}

void FabricConfig::validate() const {
  topology.validate();
  if (colors < kMinColors || colors > kMaxColors) {
    throw ConfigError("colors (routable fabric colors) must be in " + std::to_string(kMinColors) +
                      ".." + std::to_string(kMaxColors) + " [0292], got " +
                      std::to_string(colors));
  }
  if (queue_depth < 1 || queue_depth > kMaxDepth) {
    throw ConfigError("queue_depth must be in 1.." + std::to_string(kMaxDepth) + ", got " +
                      std::to_string(queue_depth));
  }
  if (priority_split < 0 || priority_split > colors) {
    throw ConfigError("priority_split must be in 0..colors (" + std::to_string(colors) +
                      "), got " + std::to_string(priority_split));
  }
  if (packet_mode) {
    if (topology.rows > kMaxPacketSide || topology.cols > kMaxPacketSide) {
      throw ConfigError("packet mode supports at most " + std::to_string(kMaxPacketSide) +
                        " rows and columns (8-bit destination coordinates), got " +
                        topology.describe());
    }
    if (topology.skip > 0 || topology.loop) {
      throw ConfigError("packet mode routes on mesh and diagonal links only: "
                        "use skip=0 and loop=False");
    }
    if (packet_routing == PacketRouting::diag_first && !topology.has_diagonals()) {
      throw ConfigError("packet routing 'diag_first' needs diagonal links (topology mesh+diag*)");
    }
  }
}

namespace {
// A 2-cycle diagonal link can deliver one more wavelet after the stall is seen: one skid
// entry keeps every queue from overflowing (docs/fabric.md, "2-cycle diagonal links").
int physical_capacity(const FabricConfig& c) {
  c.validate();
  const bool slow_links = c.topology.has_diagonals() && c.topology.diag_hop_cycles == 2;
  return c.queue_depth + (slow_links ? 1 : 0);
}
}  // namespace

Fabric::Fabric(const FabricConfig& config)
    : config_(config), capacity_(physical_capacity(config)), queues_(capacity_) {
  const Topology& t = config_.topology;
  const bool slow_links = t.has_diagonals() && t.diag_hop_cycles == 2;
  high_priority_ = config_.scheduler == SchedulerPolicy::priority
                       ? (uint64_t{1} << config_.priority_split) - 1
                       : 0;
  packet_routes_ = PacketRouteTable(t, config_.packet_routing);
  routers_.resize(static_cast<size_t>(t.size()));
  stall_out_ = ZeroedArray<uint64_t>(routers_.size());
  sleep_from_.assign(routers_.size(), kNever);
  sleep_until_.assign(routers_.size(), kNever);
  sent_count_ = ZeroedArray<uint64_t>(routers_.size() * kNumDirs);
  out_sets_ = slow_links ? 2 : 1;
  out_stride_ = routers_.size();
  out_ = ZeroedArray<Wavelet>(routers_.size() * out_sets_ * kNumDirs);
  for (int d = 0; d < kRamp; ++d) {
    const Dir dir = static_cast<Dir>(d);
    link_delta_[d] = static_cast<int64_t>(drow(dir)) * t.cols + dcol(dir);
    link_dcol_[d] = dcol(dir);
    arrival_offset_[d] = t.hop_cycles(dir) - 1;
  }
  link_delta_[kSkipE] = link_dcol_[kSkipE] = t.skip;
  link_delta_[kSkipW] = link_dcol_[kSkipW] = -t.skip;
  arrivals_.resize(t.rows, t.cols, static_cast<int>(out_sets_));
  for (int r = 0; r < t.rows; ++r) {
    for (int c = 0; c < t.cols; ++c) routers_[t.id(r, c)].links = t.link_ports(r, c);
  }
  if (config_.packet_mode) {
    // One queue per input port, including the ramp; its Src is that port alone.
    for (int r = 0; r < t.rows; ++r) {
      for (int c = 0; c < t.cols; ++c) {
        Router& rt = routers_[t.id(r, c)];
        const DirMask ins = t.link_ports(r, c) | bit(kRamp);
        for (DirMask m = ins; m; m &= m - 1) {
          const Dir d = first_dir(m);
          queues_.ensure_slot(rt, d).src = bit(d);
        }
      }
    }
    queues_.compact(routers_);
    link_sends_.resize(t.rows, t.cols, static_cast<int>(out_sets_));
    packet_hosts_.assign(routers_.size(), PacketHost{});
    packet_wake_.assign(routers_.size(), kNever);
    packet_slots_.assign(routers_.size(), 0);
    for (uint32_t id = 0; id < routers_.size(); ++id) {
      const Router& rt = routers_[id];
      for (uint64_t m = rt.keys; m; m &= m - 1) {
        const auto d = static_cast<unsigned>(std::countr_zero(m));
        packet_slots_[id] |= uint64_t{rt.slot_index(d) - rt.slot_base} << (4 * d);
      }
    }
    // The default queue (depth 2, no skid entry) fits the bit-plane pass.
    planes_fit_ = use_planes_ = config_.queue_depth == 2 && capacity_ == 2;
    if (planes_fit_) {
      DirMask dirs = bit(kRamp);
      for (const Router& rt : routers_) dirs |= rt.links;
      planes_.resize(t.rows, t.cols, dirs);
      for (int i = 0; i < PacketRouteTable::kCases; ++i) {
        planes_.route_case[i] = static_cast<int8_t>(planes_.index(packet_routes_.dir_of_case(static_cast<unsigned>(i))));
      }
    }
  }
}

DirMask Fabric::usable_ports(int r, int c) const {
  const Topology& t = topology();
  DirMask m = t.link_ports(r, c) | bit(kRamp);
  for (Dir d : {kE, kW, kN, kS}) {
    if (t.is_edge(r, c, d)) m |= bit(d);
  }
  return m;
}

void Fabric::check_ports(uint32_t id, int color, DirMask dest, DirMask src) const {
  if (config_.packet_mode) {
    throw RouteError("packet mode routes each wavelet by its destination; "
                     "color routes cannot be set");
  }
  if (id >= routers_.size()) {
    throw RouteError("router id " + std::to_string(id) + " is outside the " +
                     topology().describe());
  }
  if (color < 0 || color >= config_.colors) {
    throw ConfigError("color " + std::to_string(color) + " at router " +
                     router_name(topology(), id) + " is not a routable fabric color (0.." +
                     std::to_string(config_.colors - 1) +
                     "); ids at or above the fabric-color count are local [0096]");
  }
  const int r = static_cast<int>(id / static_cast<uint32_t>(cols()));
  const int c = static_cast<int>(id % static_cast<uint32_t>(cols()));
  const DirMask usable = usable_ports(r, c);
  const DirMask bad = static_cast<DirMask>((dest | src) & ~usable);
  if (bad) {
    throw RouteError("color " + std::to_string(color) + " at router " +
                     router_name(topology(), id) + " uses direction(s) " + mask_names(bad) +
                     " that lead off the fabric or do not exist in the " +
                     topology().describe() + "; usable here: " + mask_names(usable));
  }
}

void Fabric::apply_route(uint32_t id, int color, DirMask dest, DirMask src) {
  Router& rt = routers_[id];
  ++routes_version_;
  if (dest == 0 && src == 0) {
    if (rt.has(color) && slot(id, color).count != 0) {
      throw RouteError("cannot remove the route of color " + std::to_string(color) +
                       " at router " + router_name(topology(), id) +
                       " while wavelets are queued there");
    }
    if (rt.has(color)) drop_switch(slot(id, color));
    queues_.remove_slot(rt, color);
    return;
  }
  QueueSlot& s = queues_.ensure_slot(rt, color);
  if (RouteSwitch* sw = switch_of(s)) {  // the route is the switch's position 0
    if (s.count != 0 && (sw->dest[0] != dest || sw->src[0] != src)) {
      throw RouteError("cannot change the route of color " + std::to_string(color) +
                       " at router " + router_name(topology(), id) +
                       " while wavelets are queued there");
    }
    sw->rebuild(dest, src);
    s.dest = sw->dest[sw->pos_out];
    s.src = sw->src[sw->pos_in];
    s.hold = sw->held(sw->pos_in);
    return;
  }
  if (s.count != 0 && (s.dest != dest)) {
    throw RouteError("cannot change the Dest of color " + std::to_string(color) +
                     " at router " + router_name(topology(), id) +
                     " while wavelets are queued there");
  }
  s.dest = dest;
  s.src = src;
}

void Fabric::set_route(uint32_t id, int color, DirMask dest, DirMask src) {
  check_ports(id, color, dest, src);
  apply_route(id, color, dest, src);
}

void Fabric::add_route(uint32_t id, int color, DirMask dest, DirMask src) {
  check_ports(id, color, dest, src);
  const auto [d0, s0] = route(id, color);
  apply_route(id, color, static_cast<DirMask>(d0 | dest), static_cast<DirMask>(s0 | src));
}

void Fabric::add_routes(int color, const RouteMasks& masks, bool allow_shared_source) {
  for (const RouterMasks& m : masks.entries()) {
    check_ports(m.id, color, m.dest, m.src);
    const DirMask old_src = route(m.id, color).second;
    const auto added = static_cast<DirMask>(m.src & ~old_src);
    if (!allow_shared_source && old_src != 0 && added != 0) {
      throw RouteError("color " + std::to_string(color) + " at router " +
                       router_name(topology(), m.id) + " already comes from " +
                       mask_list(old_src) + "; this route adds " + mask_list(added) +
                       ": two active sources for one color [0302] (pass "
                       "allow_shared_source=True if only one is active at a time)");
    }
  }
  for (const RouterMasks& m : masks.entries()) {
    const auto [d0, s0] = route(m.id, color);
    apply_route(m.id, color, static_cast<DirMask>(d0 | m.dest), static_cast<DirMask>(s0 | m.src));
  }
}

uint64_t Fabric::routed_colors(std::span<const uint32_t> ids) const {
  if (config_.packet_mode) return 0;
  const uint64_t fabric_colors = (uint64_t{1} << config_.colors) - 1;
  uint64_t out = 0;
  for (uint32_t id : ids) {
    if (id >= routers_.size()) {
      throw ConfigError("router id " + std::to_string(id) + " is outside the " +
                        topology().describe());
    }
    out |= routers_[id].keys & fabric_colors;
  }
  return out;
}

std::pair<DirMask, DirMask> Fabric::route(uint32_t id, int color) const {
  if (id >= routers_.size() || color < 0 || color >= kMaxColorIds) return {0, 0};
  const Router& rt = routers_[id];
  if (config_.packet_mode || !rt.has(static_cast<unsigned>(color))) return {0, 0};
  const QueueSlot& s = slot(id, static_cast<unsigned>(color));
  if (s.switch_id != kNoSwitch) {
    const RouteSwitch& sw = switches_[s.switch_id];
    return {sw.dest[0], sw.src[0]};
  }
  return {s.dest, s.src};
}

void Fabric::clear_routes(int color) {
  if (config_.packet_mode) return;
  for (uint32_t id = 0; id < routers_.size(); ++id) {
    Router& rt = routers_[id];
    if (rt.keys == 0) continue;
    for (int k = 0; k < config_.colors; ++k) {
      if ((color < 0 || k == color) && rt.has(static_cast<unsigned>(k))) {
        apply_route(id, k, 0, 0);
      }
    }
  }
  ++routes_version_;
}

void Fabric::attach(uint32_t id, Dir port, RampEndpoint* endpoint) {
  if (id >= routers_.size()) internal_error("attach: router id out of range");
  // The packet-mode cycle loop (fabric_packet_cycle.cpp) relies on this.
  if (config_.packet_mode && endpoint != nullptr &&
      (port != kRamp || dynamic_cast<HostPort*>(endpoint) == nullptr)) {
    throw ConfigError("packet mode (NoC studies) connects host ports to ramps only: router " +
                      router_name(topology(), id) + " port " + dir_name(port));
  }
  if (port == kRamp) {
    routers_[id].ramp = PortAttachment{};
    routers_[id].ramp.endpoint = endpoint;
    routers_[id].ramp.host = dynamic_cast<HostPort*>(endpoint);
    if (endpoint) routers_[id].ramp.stall_in = endpoint->stall_to_router();
    if (config_.packet_mode) {
      packet_hosts_[id].host = routers_[id].ramp.host;
      refresh_packet_wake(id);
    }
    return;
  }
  const int r = static_cast<int>(id / static_cast<uint32_t>(cols()));
  const int c = static_cast<int>(id % static_cast<uint32_t>(cols()));
  if (!topology().is_edge(r, c, port)) {
    throw RouteError(std::string("router ") + router_name(topology(), id) + " has no edge port " +
                     dir_name(port) + ": only N/S/E/W couplings on the border with no " +
                     "neighbour are edge ports");
  }
  const uint64_t key = edge_key(id, port);
  auto it = std::lower_bound(edges_.begin(), edges_.end(), key,
                             [](const auto& e, uint64_t k) { return e.first < k; });
  if (it == edges_.end() || it->first != key) it = edges_.insert(it, {key, PortAttachment{}});
  it->second = PortAttachment{};
  it->second.endpoint = endpoint;
  it->second.host = dynamic_cast<HostPort*>(endpoint);
  if (endpoint) it->second.stall_in = endpoint->stall_to_router();
  routers_[id].edge_ports = static_cast<uint8_t>(
      endpoint ? routers_[id].edge_ports | bit(port) : routers_[id].edge_ports & ~bit(port));
}

PortAttachment* Fabric::attachment(uint32_t id, Dir port) {
  if (port == kRamp) return &routers_[id].ramp;
  const uint64_t key = edge_key(id, port);
  auto it = std::lower_bound(edges_.begin(), edges_.end(), key,
                             [](const auto& e, uint64_t k) { return e.first < k; });
  return it != edges_.end() && it->first == key ? &it->second : nullptr;
}

const PortAttachment* Fabric::attachment(uint32_t id, Dir port) const {
  return const_cast<Fabric*>(this)->attachment(id, port);
}

RampEndpoint* Fabric::endpoint(uint32_t id, Dir port) const {
  const PortAttachment* a = attachment(id, port);
  return a ? a->endpoint : nullptr;
}

// Packet mode derives two counters from the queues: a wavelet that entered a queue is
// still there or was forwarded, and what router id sent toward link o entered the
// receiver's queue of input o^1. The stored counters then hold what was queued at the last
// reset, so the difference counts from there.
uint64_t Fabric::router_traversals(uint32_t id) const {
  const Router& rt = routers_[id];
  if (!config_.packet_mode) return rt.enqueued;
  uint64_t n = rt.queued;
  for_each_slot(id, [&](const QueueSlot& s) { n += s.forwarded; });
  return n - rt.enqueued;
}

uint64_t Fabric::sent_count(uint32_t id, Dir dir) const {
  const uint64_t stored = sent_count_[static_cast<size_t>(dir) * routers_.size() + id];
  if (!config_.packet_mode || !(routers_[id].links & bit(dir))) return stored;
  // Packet mode has no loop links: the receiver is one link step away.
  const QueueSlot& s = slot(static_cast<uint32_t>(static_cast<int64_t>(id) + link_delta_[dir]),
                            opposite(dir));
  return s.forwarded + s.count - stored;
}

void Fabric::reset_counters() {
  for (uint32_t id = 0; id < routers_.size(); ++id) {
    Router& rt = routers_[id];
    rt.enqueued = config_.packet_mode ? rt.queued : 0;
    rt.occupancy_sum = 0;
    rt.occupancy_max = 0;
    for_each_slot(id, [](QueueSlot& s) { s.forwarded = 0; });
  }
  for (RouteSwitch& sw : switches_) sw.forwarded = {};
  for (int d = 0; d < kNumDirs; ++d) {
    const auto dir = static_cast<Dir>(d);
    for (uint32_t id = 0; id < routers_.size(); ++id) {
      uint64_t& stored = sent_count_[static_cast<size_t>(d) * routers_.size() + id];
      stored = 0;
      if (config_.packet_mode && (routers_[id].links & bit(dir))) {
        stored = slot(static_cast<uint32_t>(static_cast<int64_t>(id) + link_delta_[d]),
                      opposite(dir)).count;
      }
    }
  }
}

void Fabric::refresh_packet_wake(uint32_t id) {
  PacketHost& ph = packet_hosts_[id];
  const HostPort* const host = ph.host;
  packet_wake_[id] = host == nullptr || host->idle() ? kNever : 0;
  const HostPort::NextReads next = host ? host->next_reads() : HostPort::NextReads{};
  ph.fifo = next.fifo;
  ph.wavelet = next.wavelet;
}

void Fabric::latch_endpoint_stalls() {
  for (Router& rt : routers_) {
    if (rt.ramp.endpoint) rt.ramp.stall_in = rt.ramp.endpoint->stall_to_router();
  }
  for (uint32_t id = 0; id < packet_hosts_.size(); ++id) refresh_packet_wake(id);
  for (auto& [key, a] : edges_) {
    if (a.endpoint) a.stall_in = a.endpoint->stall_to_router();
  }
}

DirMask Fabric::directions_between_rows(int from, int to) const {
  DirMask m = 0;
  if (from == to) m |= bit(kE) | bit(kW) | bit(kSkipE) | bit(kSkipW);
  const Topology& t = topology();
  for (Dir d : {kN, kS, kNE, kSW, kNW, kSE}) {
    int r = from + drow(d);
    if (t.loop && (d == kN || d == kS)) r = (r + t.rows) % t.rows;
    if (r == to) m |= bit(d);
  }
  return m;
}

uint64_t Fabric::wake_endpoint(uint32_t id, uint64_t now) {
  const uint64_t from = sleep_from_[id];
  sleep_from_[id] = kNever;
  // (now < from only when a cycle failed part-way, after it put the endpoint to sleep.)
  if (now <= from) return 0;
  routers_[id].ramp.endpoint->catch_up(from, now - from);
  return now - from;
}

bool Fabric::has_work(uint32_t id) const {
  const Router& rt = routers_[id];
  if (rt.busy) return true;
  if (rt.ramp.endpoint && !rt.ramp.endpoint->idle()) return true;
  for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
    const RampEndpoint* e = endpoint(id, first_dir(m));
    if (e && !e->idle()) return true;
  }
  return false;
}

std::vector<Wavelet> Fabric::queue_contents(uint32_t id, unsigned key) const {
  std::vector<Wavelet> out;
  if (id >= routers_.size() || key >= 64) return out;
  const Router& rt = routers_[id];
  if (!rt.has(key)) return out;
  const uint32_t index = rt.slot_index(key);
  const QueueSlot& s = queues_.slot(index);
  for (int i = 0; i < s.count; ++i) out.push_back(queues_.entries(index)[(s.head + i) % capacity_]);
  return out;
}

}  // namespace wafersim::fabric
