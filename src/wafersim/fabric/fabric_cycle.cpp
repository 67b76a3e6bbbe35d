// One router's share of a cycle (docs/fabric.md, "cycle contract").
//
// Phase A (send): each output direction's scheduler picks one ready color whose Dest
// includes it, whose head has not yet been sent there (Sent) and which the receiver does
// not stall (stall bits from the end of the previous cycle) [0318]-[0320]; the head is
// copied into this router's output register for that direction. A head that has now been
// sent to every Dest direction is dequeued [0301]. Endpoints step and may offer.
// Phase B (receive): arrivals from neighbours' output registers, the on-ramp and edge
// ports are enqueued by color [0317]; the off-ramp is delivered; per-color stall bits are
// recomputed from the occupancy after this cycle's enqueues and dequeues [0333].
#include <bit>
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/fabric/fabric.hpp"

namespace wafersim::fabric {

namespace {

int row_of(uint32_t id, int cols) { return static_cast<int>(id / static_cast<uint32_t>(cols)); }

}  // namespace

DirMask Fabric::phase_a(uint32_t id, uint64_t cycle, CycleCounters& counters) {
  return config_.packet_mode ? phase_a_impl<true>(id, cycle, counters)
                             : phase_a_impl<false>(id, cycle, counters);
}

bool Fabric::phase_b(uint32_t id, uint64_t cycle, CycleCounters& counters) {
  return config_.packet_mode ? phase_b_impl<true>(id, cycle, counters)
                             : phase_b_impl<false>(id, cycle, counters);
}

// Is output `o` stalled for the head of queue `key`? Stall bits come from the end of the
// previous cycle: a neighbour's per-color stall [0334], or the endpoint's [0330].
template <bool kPacket>
bool Fabric::output_blocked(const Router& rt, uint32_t id, int row, Dir o, unsigned key,
                            const Wavelet& head) const {
  const unsigned color = kPacket ? head.color : key;
  if (o == kRamp) return rt.ramp.endpoint == nullptr || ((rt.ramp.stall_in >> color) & 1u);
  if (rt.edge_ports & bit(o)) {  // an edge port on the border
    return (attachment(id, o)->stall_in >> color) & 1u;
  }
  if (!kPacket && topology().neighbour(row, static_cast<int>(id) - row * cols(), o) < 0) {
    return true;  // an edge port with no endpoint (routes cannot start a run like that)
  }
  // In packet mode the receiver queues by input port, so its stall bit is per port.
  const unsigned their_key = kPacket ? static_cast<unsigned>(opposite(o)) : key;
  return (stall_out_[link_target(id, row, o)] >> their_key) & 1u;
}

// The scheduler of output `o`: candidates are slot positions (slots are in color order, so
// cycling over positions cycles over colors) [0320].
unsigned Fabric::pick(const Router& rt, uint64_t candidates, Dir o) const {
  if (config_.scheduler == SchedulerPolicy::priority && !config_.packet_mode) {
    uint64_t high = 0;
    for (uint64_t m = candidates; m; m &= m - 1) {
      const unsigned i = static_cast<unsigned>(std::countr_zero(m));
      if ((high_priority_ >> queues_.slot(rt.slot_base + i).key) & 1u) high |= uint64_t{1} << i;
    }
    if (high) candidates = high;
  }
  return pick_round_robin(candidates, rt.last_pick[o]);
}

void Fabric::step_endpoint(uint32_t id, PortAttachment& a, Dir port, uint64_t cycle,
                           CycleCounters& counters) {
  if (a.endpoint == nullptr) return;  // an idle endpoint's step is cheap: no idle() call
  // The router's stall toward this port: per color, or (packet mode) the port's queue.
  const ColorMask stall = config_.packet_mode
                              ? (((stall_out_[id] >> port) & 1u) ? ~ColorMask{0} : 0)
                              : stall_out_[id];
  Wavelet w;
  const RampStep step = a.endpoint->step(cycle, stall, w);
  if (step.progressed) ++counters.progress;
  if (!step.offered) return;
  ++counters.moves;
  auto where = [&] {
    return std::string("the ") + (port == kRamp ? "on-ramp" : "edge port ") +
           (port == kRamp ? "" : dir_name(port)) + " of router " + router_name(topology(), id);
  };
  if (w.color >= config_.colors) {
    counters.fail(std::make_exception_ptr(RouteError(
        "a wavelet of color " + std::to_string(w.color) + " was offered on " + where() +
        ", but only colors 0.." + std::to_string(config_.colors - 1) + " enter the fabric")));
    return;
  }
  if ((stall >> w.color) & 1u) {
    counters.fail(std::make_exception_ptr(WaferError(
        "internal error (please report): an endpoint offered color " +
        std::to_string(w.color) + " on " + where() + " while the router stalls it",
        ErrorCategory::internal)));
    return;
  }
  a.offer = w;
  a.offer_cycle = cycle;
}

template <bool kPacket>
DirMask Fabric::phase_a_impl(uint32_t id, uint64_t cycle, CycleCounters& counters) {
  Router& rt = routers_[id];
  const int row = row_of(id, cols());
  const uint32_t base = rt.slot_base;
  rt.out_valid = 0;
  rt.out_cycle = cycle;

  // Candidates per output direction (as slot positions): heads not yet sent there whose
  // receiver does not stall them.
  uint64_t candidates[kNumDirs];
  DirMask ports = 0;
  for (uint64_t m = rt.busy; m; m &= m - 1) {
    const unsigned i = static_cast<unsigned>(std::countr_zero(m));
    const QueueSlot& s = queues_.slot(base + i);
    const Wavelet& head = queues_.entries(base + i)[s.head];
    for (DirMask pending = s.dest & ~s.sent; pending; pending &= pending - 1) {
      const Dir o = first_dir(pending);
      if (output_blocked<kPacket>(rt, id, row, o, s.key, head)) continue;
      if (!(ports & bit(o))) {
        ports |= bit(o);
        candidates[o] = 0;
      }
      candidates[o] |= uint64_t{1} << i;
    }
  }

  // One independent scheduler per output direction, one wavelet each [0315], [0319].
  uint64_t picked = 0;
  for (DirMask m = ports; m; m &= m - 1) {
    const Dir o = first_dir(m);
    const unsigned i = pick(rt, candidates[o], o);
    rt.last_pick[o] = static_cast<uint8_t>(i);
    QueueSlot& s = queues_.slot(base + i);
    out_[out_index(id, cycle, o)] = queues_.entries(base + i)[s.head];
    s.sent |= bit(o);
    ++rt.sent_count[o];
    picked |= uint64_t{1} << i;
  }
  rt.out_valid = ports;
  counters.moves += static_cast<uint64_t>(popcount64(ports));
  if (topology().diag_hop_cycles == 2) {
    constexpr DirMask kDiagonals = bit(kNE) | bit(kSW) | bit(kNW) | bit(kSE);
    counters.slow_links_used += static_cast<uint64_t>(popcount64(ports & kDiagonals));
  }

  // A head sent to every Dest direction leaves; the next wavelet of its color may move
  // from the next cycle on [0301].
  for (uint64_t m = picked; m; m &= m - 1) {
    const unsigned i = static_cast<unsigned>(std::countr_zero(m));
    QueueSlot& s = queues_.slot(base + i);
    if ((s.sent & s.dest) != s.dest) continue;
    s.sent = 0;
    s.head = static_cast<uint8_t>(s.head + 1 == capacity_ ? 0 : s.head + 1);
    --s.count;
    ++s.forwarded;
    --rt.queued;
    --counters.queued_delta;
    if (s.count == 0) {
      rt.busy &= ~(uint64_t{1} << i);
      if constexpr (kPacket) s.dest = 0;
    } else if constexpr (kPacket) {
      const Wavelet& next = queues_.entries(base + i)[s.head];
      s.dest = bit(packet_next_dir(topology(), config_.packet_routing, row,
                                   static_cast<int>(id) - row * cols(), next.dest));
    }
  }

  // The endpoints' own cycle; they see the router's stall bits of the previous cycle.
  step_endpoint(id, rt.ramp, kRamp, cycle, counters);
  for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
    const Dir d = first_dir(m);
    step_endpoint(id, *attachment(id, d), d, cycle, counters);
  }
  return static_cast<DirMask>(ports & ~bit(kRamp) & ~DirMask{rt.edge_ports});
}

// Why a wavelet could not be enqueued; built off the hot path.
enum class EnqueueFault : uint8_t { no_route, not_a_source, two_sources, overflow };

[[gnu::cold, gnu::noinline]] static void fail_enqueue(CycleCounters& counters, EnqueueFault f,
                                                      const Topology& t, uint32_t id,
                                                      const Wavelet& w, Dir from, Dir other,
                                                      bool packet, unsigned key) {
  const std::string here = "router " + router_name(t, id);
  const std::string color = std::to_string(w.color);
  switch (f) {
    case EnqueueFault::no_route:
      counters.fail(std::make_exception_ptr(RouteError(
          "a wavelet of color " + color + " arrived at " + here + " from " + dir_name(from) +
          ", but color " + color + " has no route there")));
      return;
    case EnqueueFault::not_a_source:
      counters.fail(std::make_exception_ptr(RouteError(
          "a wavelet of color " + color + " arrived at " + here + " from " + dir_name(from) +
          ", which is not a source (Src) of that color there")));
      return;
    case EnqueueFault::two_sources:
      // One buffer per color: only one source may be active at a time [0302].
      counters.fail(std::make_exception_ptr(RouteError(
          "two wavelets of color " + color + " arrived at " + here + " in the same cycle, from " +
          dir_name(other) + " and from " + dir_name(from) +
          ": a color has one active source at a time [0302]")));
      return;
    case EnqueueFault::overflow:
      counters.fail(std::make_exception_ptr(WaferError(
          "internal error (please report): queue of " + std::string(packet ? "port " : "color ") +
              std::to_string(key) + " overflowed at " + here,
          ErrorCategory::internal)));
      return;
  }
}

template <bool kPacket>
void Fabric::enqueue(Router& rt, uint32_t id, int row, const Wavelet& w, Dir from,
                     uint64_t& arrived, uint8_t* arrived_from, CycleCounters& counters) {
  const unsigned key = kPacket ? static_cast<unsigned>(from) : w.color;
  if (!kPacket && (key >= static_cast<unsigned>(config_.colors) || !rt.has(key))) [[unlikely]] {
    fail_enqueue(counters, EnqueueFault::no_route, topology(), id, w, from, from, kPacket, key);
    return;
  }
  const uint32_t index = rt.slot_index(key);
  const unsigned i = index - rt.slot_base;
  QueueSlot& s = queues_.slot(index);
  if (!kPacket && !(s.src & bit(from))) [[unlikely]] {
    fail_enqueue(counters, EnqueueFault::not_a_source, topology(), id, w, from, from, kPacket, key);
    return;
  }
  if ((arrived >> i) & 1u) [[unlikely]] {
    fail_enqueue(counters, EnqueueFault::two_sources, topology(), id, w, from,
                 static_cast<Dir>(arrived_from[i]), kPacket, key);
    return;
  }
  arrived |= uint64_t{1} << i;
  arrived_from[i] = from;
  if (s.count >= capacity_) [[unlikely]] {
    fail_enqueue(counters, EnqueueFault::overflow, topology(), id, w, from, from, kPacket, key);
    return;
  }
  int tail = s.head + s.count;  // ring position without a division
  if (tail >= capacity_) tail -= capacity_;
  queues_.entries(index)[tail] = w;
  if (s.count == 0) {
    rt.busy |= uint64_t{1} << i;
    if constexpr (kPacket) {
      s.dest = bit(packet_next_dir(topology(), config_.packet_routing, row,
                                   static_cast<int>(id) - row * cols(), w.dest));
    }
  }
  ++s.count;
  ++rt.queued;
  ++rt.enqueued;
  ++counters.queued_delta;
}

void Fabric::deliver(PortAttachment& a, const Wavelet& w, uint64_t cycle,
                     CycleCounters& counters) {
  if (a.endpoint == nullptr) {
    counters.fail(std::make_exception_ptr(
        WaferError("internal error (please report): delivery to a missing endpoint",
                   ErrorCategory::internal)));
    return;
  }
  counters.record_delivery(w, cycle);
  a.endpoint->accept(w, cycle);
}

template <bool kPacket>
bool Fabric::phase_b_impl(uint32_t id, uint64_t cycle, CycleCounters& counters) {
  Router& rt = routers_[id];
  const int row = row_of(id, cols());
  uint64_t arrived = 0;
  uint8_t arrived_from[64];

  // Neighbours' output registers that hold a wavelet for this router [0315], [0317].
  for (DirMask m = rt.arrivals; m; m &= m - 1) {
    const Dir in = first_dir(m);
    const uint64_t sent_cycle = cycle - static_cast<uint64_t>(topology().hop_cycles(in) - 1);
    // The simulator sets `arrivals` only from this cycle's (or, for 2-cycle links, last
    // cycle's) senders, so the register holds the wavelet.
    Wavelet w = out_register(link_target(id, row, in), sent_cycle, opposite(in));
    ++w.hops;
    enqueue<kPacket>(rt, id, row, w, in, arrived, arrived_from, counters);
  }
  rt.arrivals = 0;

  // The on-ramp and edge ports offered in phase A of this cycle.
  if (rt.ramp.offer_cycle == cycle) {
    ++counters.injected;
    enqueue<kPacket>(rt, id, row, rt.ramp.offer, kRamp, arrived, arrived_from, counters);
  }
  for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
    const Dir d = first_dir(m);
    PortAttachment& a = *attachment(id, d);
    if (a.offer_cycle == cycle) {
      ++counters.injected;
      enqueue<kPacket>(rt, id, row, a.offer, d, arrived, arrived_from, counters);
    }
  }

  // What this router sent to its own endpoints (off-ramp, edge ports) this cycle.
  if (rt.out_cycle == cycle) {
    const DirMask v = rt.out_valid;
    if (v & bit(kRamp)) deliver(rt.ramp, out_register(id, cycle, kRamp), cycle, counters);
    for (uint8_t m = static_cast<uint8_t>(rt.edge_ports & v); m;
         m &= static_cast<uint8_t>(m - 1)) {
      const Dir d = first_dir(m);  // edge_ports only holds border couplings
      deliver(*attachment(id, d), out_register(id, cycle, d), cycle, counters);
    }
  }

  // Stall when a queue holds more than depth-1 wavelets after this cycle [0333].
  uint64_t stall = 0;
  const int threshold = stall_threshold();
  for (uint64_t m = rt.busy; m; m &= m - 1) {
    const QueueSlot& s = queues_.slot(rt.slot_base + static_cast<uint32_t>(std::countr_zero(m)));
    if (s.count > threshold) stall |= uint64_t{1} << s.key;
  }
  stall_out_[id] = stall;

  bool busy = rt.busy != 0;
  if (rt.ramp.endpoint) {
    rt.ramp.endpoint->finish_cycle(cycle);
    rt.ramp.stall_in = rt.ramp.endpoint->stall_to_router();
    busy = busy || !rt.ramp.endpoint->idle();
  }
  for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
    PortAttachment& a = *attachment(id, first_dir(m));
    a.endpoint->finish_cycle(cycle);
    a.stall_in = a.endpoint->stall_to_router();
    busy = busy || !a.endpoint->idle();
  }
  rt.occupancy_sum += rt.queued;
  if (rt.queued > rt.occupancy_max) rt.occupancy_max = rt.queued;
  return busy;
}

template DirMask Fabric::phase_a_impl<false>(uint32_t, uint64_t, CycleCounters&);
template DirMask Fabric::phase_a_impl<true>(uint32_t, uint64_t, CycleCounters&);
template bool Fabric::phase_b_impl<false>(uint32_t, uint64_t, CycleCounters&);
template bool Fabric::phase_b_impl<true>(uint32_t, uint64_t, CycleCounters&);

}  // namespace wafersim::fabric
