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
int col_of(uint32_t id, int cols) { return static_cast<int>(id % static_cast<uint32_t>(cols)); }

}  // namespace

bool Fabric::phase_a(uint32_t id, uint64_t cycle, CycleCounters& counters) {
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
bool Fabric::output_blocked(const Router& rt, int row, int col, Dir o, unsigned key,
                            const Wavelet& head) const {
  const unsigned color = kPacket ? head.color : key;
  if (o == kRamp) return rt.ramp.endpoint == nullptr || ((rt.ramp.stall_in >> color) & 1u);
  const int64_t n = topology().neighbour(row, col, o);
  if (n < 0) {  // an edge port on the border
    const PortAttachment* a = attachment(topology().id(row, col), o);
    return a == nullptr || a->endpoint == nullptr || ((a->stall_in >> color) & 1u);
  }
  // In packet mode the receiver queues by input port, so its stall bit is per port.
  const unsigned their_key = kPacket ? static_cast<unsigned>(opposite(o)) : key;
  return (routers_[static_cast<size_t>(n)].stall_out >> their_key) & 1u;
}

void Fabric::step_endpoint(Router& rt, uint32_t id, PortAttachment& a, Dir port, uint64_t cycle,
                           CycleCounters& counters) {
  if (a.endpoint == nullptr || a.endpoint->idle()) return;
  // The router's stall toward this port: per color, or (packet mode) the port's queue.
  const ColorMask stall = config_.packet_mode
                              ? (((rt.stall_out >> port) & 1u) ? ~ColorMask{0} : 0)
                              : rt.stall_out;
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
bool Fabric::phase_a_impl(uint32_t id, uint64_t cycle, CycleCounters& counters) {
  Router& rt = routers_[id];
  const int row = row_of(id, cols()), col = col_of(id, cols());
  const int p = static_cast<int>(cycle & 1);
  rt.out_valid[p] = 0;
  rt.out_cycle[p] = cycle;

  // Candidates per output direction: colors with a head not yet sent there, not stalled.
  ColorMask candidates[kNumDirs];
  DirMask ports = 0;
  for (uint64_t m = rt.nonempty; m; m &= m - 1) {
    const unsigned key = static_cast<unsigned>(std::countr_zero(m));
    const int rank = rt.rank(key);
    const QueueSlot& s = rt.slots[rank];
    const Wavelet& head = rt.entries[static_cast<size_t>(rank) * capacity_ + s.head];
    for (DirMask pending = s.dest & ~s.sent; pending; pending &= pending - 1) {
      const Dir o = first_dir(pending);
      if (output_blocked<kPacket>(rt, row, col, o, key, head)) continue;
      if (!(ports & bit(o))) {
        ports |= bit(o);
        candidates[o] = 0;
      }
      candidates[o] |= uint64_t{1} << key;
    }
  }

  // One independent scheduler per output direction, one wavelet each [0315], [0319].
  uint64_t picked = 0;
  for (DirMask m = ports; m; m &= m - 1) {
    const Dir o = first_dir(m);
    const unsigned key = kPacket ? pick_round_robin(candidates[o], rt.last_pick[o])
                                 : pick_color(candidates[o], rt.last_pick[o],
                                              config_.scheduler, high_priority_);
    rt.last_pick[o] = static_cast<uint8_t>(key);
    const int rank = rt.rank(key);
    QueueSlot& s = rt.slots[rank];
    rt.out[p][o] = rt.entries[static_cast<size_t>(rank) * capacity_ + s.head];
    rt.out_valid[p] |= bit(o);
    s.sent |= bit(o);
    ++rt.sent_count[o];
    picked |= uint64_t{1} << key;
    if (topology().hop_cycles(o) == 2) ++counters.slow_links_used;
  }
  counters.moves += static_cast<uint64_t>(std::popcount(rt.out_valid[p]));

  // A head sent to every Dest direction leaves; the next wavelet of its color may move
  // from the next cycle on [0301].
  for (uint64_t m = picked; m; m &= m - 1) {
    const unsigned key = static_cast<unsigned>(std::countr_zero(m));
    const int rank = rt.rank(key);
    QueueSlot& s = rt.slots[rank];
    if ((s.sent & s.dest) != s.dest) continue;
    s.sent = 0;
    s.head = static_cast<uint8_t>((s.head + 1) % capacity_);
    --s.count;
    ++s.forwarded;
    --rt.queued;
    --counters.queued_delta;
    if (s.count == 0) {
      rt.nonempty &= ~(uint64_t{1} << key);
      if constexpr (kPacket) s.dest = 0;
    } else if constexpr (kPacket) {
      const Wavelet& next = rt.entries[static_cast<size_t>(rank) * capacity_ + s.head];
      s.dest = bit(packet_next_dir(topology(), config_.packet_routing, row, col, next.dest));
    }
  }

  // The endpoints' own cycle; they see the router's stall bits of the previous cycle.
  step_endpoint(rt, id, rt.ramp, kRamp, cycle, counters);
  for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
    const Dir d = first_dir(m);
    step_endpoint(rt, id, *attachment(id, d), d, cycle, counters);
  }
  return (rt.out_valid[p] & ~bit(kRamp)) != 0;
}

template <bool kPacket>
void Fabric::enqueue(Router& rt, uint32_t id, const Wavelet& w, Dir from, uint64_t& arrived,
                     uint8_t* arrived_from, CycleCounters& counters) {
  const unsigned key = kPacket ? static_cast<unsigned>(from) : w.color;
  auto here = [&] { return "router " + router_name(topology(), id); };
  if (!kPacket && (key >= static_cast<unsigned>(config_.colors) || !rt.has(key))) {
    counters.fail(std::make_exception_ptr(RouteError(
        "a wavelet of color " + std::to_string(w.color) + " arrived at " + here() + " from " +
        dir_name(from) + ", but color " + std::to_string(w.color) + " has no route there")));
    return;
  }
  const int rank = rt.rank(key);
  QueueSlot& s = rt.slots[rank];
  if (!kPacket && !(s.src & bit(from))) {
    counters.fail(std::make_exception_ptr(RouteError(
        "a wavelet of color " + std::to_string(w.color) + " arrived at " + here() + " from " +
        dir_name(from) + ", which is not a source (Src) of that color there")));
    return;
  }
  if ((arrived >> key) & 1u) {
    // One buffer per color: only one source may be active at a time [0302].
    counters.fail(std::make_exception_ptr(RouteError(
        "two wavelets of color " + std::to_string(w.color) + " arrived at " + here() +
        " in the same cycle, from " + dir_name(static_cast<Dir>(arrived_from[key])) +
        " and from " + dir_name(from) +
        ": a color has one active source at a time [0302]")));
    return;
  }
  arrived |= uint64_t{1} << key;
  arrived_from[key] = from;
  if (s.count >= capacity_) {
    counters.fail(std::make_exception_ptr(WaferError(
        "internal error (please report): queue of " + std::string(kPacket ? "port " : "color ") +
            std::to_string(key) + " overflowed at " + here(),
        ErrorCategory::internal)));
    return;
  }
  rt.entries[static_cast<size_t>(rank) * capacity_ + (s.head + s.count) % capacity_] = w;
  if (s.count == 0) {
    rt.nonempty |= uint64_t{1} << key;
    if constexpr (kPacket) {
      s.dest = bit(packet_next_dir(topology(), config_.packet_routing, row_of(id, cols()),
                                   col_of(id, cols()), w.dest));
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
  const int row = row_of(id, cols()), col = col_of(id, cols());
  const int p = static_cast<int>(cycle & 1);
  uint64_t arrived = 0;
  uint8_t arrived_from[64];

  // Neighbours' output registers that hold a wavelet for this router [0315], [0317].
  for (DirMask m = rt.arrivals; m; m &= m - 1) {
    const Dir in = first_dir(m);
    const int64_t n = topology().neighbour(row, col, in);
    const uint64_t sent_cycle = cycle - static_cast<uint64_t>(topology().hop_cycles(in) - 1);
    const int sp = static_cast<int>(sent_cycle & 1);
    const Dir o = opposite(in);
    if (n < 0) continue;
    const Router& sender = routers_[static_cast<size_t>(n)];
    if (sender.out_cycle[sp] != sent_cycle || !(sender.out_valid[sp] & bit(o))) continue;
    Wavelet w = sender.out[sp][o];
    ++w.hops;
    enqueue<kPacket>(rt, id, w, in, arrived, arrived_from, counters);
  }
  rt.arrivals = 0;

  // The on-ramp and edge ports offered in phase A of this cycle.
  if (rt.ramp.offer_cycle == cycle) {
    ++counters.injected;
    enqueue<kPacket>(rt, id, rt.ramp.offer, kRamp, arrived, arrived_from, counters);
  }
  for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
    const Dir d = first_dir(m);
    PortAttachment& a = *attachment(id, d);
    if (a.offer_cycle == cycle) {
      ++counters.injected;
      enqueue<kPacket>(rt, id, a.offer, d, arrived, arrived_from, counters);
    }
  }

  // What this router sent to its own endpoints (off-ramp, edge ports) this cycle.
  if (rt.out_cycle[p] == cycle) {
    const DirMask v = rt.out_valid[p];
    if (v & bit(kRamp)) deliver(rt.ramp, rt.out[p][kRamp], cycle, counters);
    for (uint8_t m = static_cast<uint8_t>(rt.edge_ports & v); m;
         m &= static_cast<uint8_t>(m - 1)) {
      const Dir d = first_dir(m);
      if (topology().neighbour(row, col, d) < 0) {
        deliver(*attachment(id, d), rt.out[p][d], cycle, counters);
      }
    }
  }

  // Stall when a queue holds more than depth-1 wavelets after this cycle [0333].
  uint64_t stall = 0;
  const int threshold = stall_threshold();
  for (uint64_t m = rt.nonempty; m; m &= m - 1) {
    const unsigned key = static_cast<unsigned>(std::countr_zero(m));
    if (rt.slots[rt.rank(key)].count > threshold) stall |= uint64_t{1} << key;
  }
  rt.stall_out = stall;

  bool busy = rt.nonempty != 0;
  if (rt.ramp.endpoint) {
    rt.ramp.stall_in = rt.ramp.endpoint->stall_to_router();
    busy = busy || !rt.ramp.endpoint->idle();
  }
  for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
    PortAttachment& a = *attachment(id, first_dir(m));
    a.stall_in = a.endpoint->stall_to_router();
    busy = busy || !a.endpoint->idle();
  }
  rt.occupancy_sum += rt.queued;
  if (rt.queued > rt.occupancy_max) rt.occupancy_max = rt.queued;
  return busy;
}

template bool Fabric::phase_a_impl<false>(uint32_t, uint64_t, CycleCounters&);
template bool Fabric::phase_a_impl<true>(uint32_t, uint64_t, CycleCounters&);
template bool Fabric::phase_b_impl<false>(uint32_t, uint64_t, CycleCounters&);
template bool Fabric::phase_b_impl<true>(uint32_t, uint64_t, CycleCounters&);

}  // namespace wafersim::fabric
