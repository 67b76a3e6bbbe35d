// One row's share of a cycle in packet mode (NoC studies, docs/fabric.md "Packet mode"):
// the general pass, for any queue depth. The default queues (depth 2, no skid entry) run
// on the bit-plane pass instead (fabric_packet_planes_cycle.cpp), which tests compare
// with this one.
//
// The cycle contract is the one of fabric_cycle.cpp: in phase A each output direction's
// scheduler picks one head its receiver does not stall (stall bits from the end of the
// previous cycle) [0318]-[0320] and copies it into the output register; in phase B
// arrivals and the on-ramp offer are enqueued [0317], the off-ramp is delivered, and the
// stall bits are recomputed [0333].
//
// Packet mode allows less than color routing, and this pass is written for exactly that:
// a queue per input port (a port takes at most one wavelet per cycle, so two sources never
// meet in one queue), one Dest direction per head, taken from the routing function when
// the wavelet becomes the head (a packet is never multicast, so it leaves when it is
// sent), and on each ramp a host port or nothing (Fabric::attach enforces it). NoC studies
// run millions of router-cycles, so:
// - senders mark a bit per wavelet in their row's LinkSends block, and a receiving row
//   enqueues one input direction at a time over the whole row, from those bits shifted
//   by the link's column step (no per-router loop over arrivals, whose length varies);
// - in phase A a router's state is read into locals and written back once, and the
//   per-direction tables are locals of the row loop, where byte-wide stores to the queues
//   cannot make the compiler reload them;
// - bit masks come from tables or from the queue (a packet-mode queue's Src is its key's
//   bit) rather than from shifts by a variable, which cost several instructions on
//   baseline x86-64;
// - the default queue capacity, 2, has its ring arithmetic spelled out (kCapacity = 2;
//   0 reads the capacity at run time);
// - the off-ramp is delivered in phase A, right after the host port's step, not in phase
//   B: a host port's accept() touches only what its own next step and the end of the
//   cycle read, so it sees the same sequence either way, with the same cycle stamps;
// - a cycle touches one cache line of a Router and none of its host port unless the port
//   acts: what the loop needs of the port is in a compact array (Fabric::PacketHost; the
//   port is stepped only from the cycle HostPort::quiet_until names), on-ramp offers are
//   flagged in the row's LinkSends block, the port's stall bits are read from the port
//   (the Simulator latches them into the Router when a run ends), and router traversals
//   and link counts are derived from the queues (Fabric::router_traversals,
//   Fabric::sent_count): only off-ramp sends are counted;
// - what the loop will read from far away is fetched ahead (prefetch hints, which change
//   no result): before the row's routers, the lines of the host ports that step this
//   cycle, whose addresses the loop keeps per router (Fabric::PacketHost); in the loop,
//   the queue entries of the active router two places on;
// - an arrival's hop is counted while it is copied, in registers (copy_with_one_more_hop).
#include <bit>
#include <cstddef>

#include "wafersim/fabric/cycle_faults.hpp"
#include "wafersim/fabric/fabric.hpp"
#include "wafersim/fabric/host_port.hpp"
#include "wafersim/fabric/packet_pass_common.hpp"

namespace wafersim::fabric {

template <int kCapacity>
class Fabric::PacketRowPass : RowFrame {
 public:
  PacketRowPass(Fabric& f, int row, uint64_t cycle, CycleCounters& counters)
      : RowFrame(f, row, cycle, counters),
        packet_slots_(f.packet_slots_.data()),
        routes_(f.packet_routes_),
        runtime_capacity_(f.capacity_),
        threshold_(static_cast<unsigned>(f.stall_threshold())) {
    // Packet mode has no loop links (FabricConfig::validate): the steps are the same in
    // every row, and small enough for 32 bits (at most 256 x 256 routers).
    for (int d = 0; d < kNumDirs; ++d) delta_[d] = static_cast<int32_t>(f.link_delta_[d]);
  }

  // Phase A for the routers set in `active`; true if a wavelet went on a link.
  WAFERSIM_X86_64_V3_CLONE bool send_all(const uint64_t* active);
  // Phase B for the routers set in `active` or receiving; see Fabric::phase_b_row.
  WAFERSIM_X86_64_V3_CLONE uint32_t receive_all(const uint64_t* active, uint64_t* next_active,
                                                uint32_t& next_count);

 private:
  // Ring-buffer steps of a queue of capacity() entries.
  unsigned ring_next(unsigned pos) const {
    if constexpr (kCapacity == 2) return pos ^ 1u;
    return fabric::ring_next(pos, capacity());
  }
  unsigned ring_tail(unsigned head, unsigned count) const {
    if constexpr (kCapacity == 2) return head ^ count;  // count is 0 or 1 here
    const int tail = static_cast<int>(head + count);
    return static_cast<unsigned>(tail - (capacity() & -static_cast<int>(tail >= capacity())));
  }
  // kHop: the wavelet crossed a link (counted in the queue entry, see enqueue).
  template <bool kHop>
  void enqueue(uint32_t id, int col, const Wavelet& w, Dir from);

  const uint64_t* const packet_slots_;
  const PacketRouteTable routes_;
  const int runtime_capacity_;
  // Entries per queue: a constant in the kCapacity = 2 build, so index arithmetic folds.
  int capacity() const { return kCapacity ? kCapacity : runtime_capacity_; }
  const unsigned threshold_;  // a queue holding more stalls its source [0333]
  int32_t delta_[kNumDirs];   // router-id step across each link
};

template <int kCapacity>
WAFERSIM_X86_64_V3_CLONE bool Fabric::PacketRowPass<kCapacity>::send_all(const uint64_t* active) {
  Fabric& f = f_;
  const Topology& t = f.topology();
  const int cap = capacity();
  const unsigned threshold = threshold_;
  const DirMask slow_links =
      t.diag_hop_cycles == 2 ? static_cast<DirMask>(bit(kNE) | bit(kSW) | bit(kNW) | bit(kSE)) : 0;
  const auto colors = static_cast<unsigned>(f.config_.colors);
  // Per output direction: this cycle's output registers (by router id), the row's bits of
  // who sent that way, and the link's router-id step. Locals: see above.
  Wavelet* out[kNumDirs];
  uint64_t* const ramp_sent_count = &f.sent_count_[static_cast<size_t>(kRamp) * f.routers_.size()];
  uint64_t* sent_bits[kNumDirs] = {};
  int32_t delta[kNumDirs];
  uint64_t* const bits = f.link_sends_.begin_row(row_, cycle_);
  for (int d = 0; d < kNumDirs; ++d) {
    out[d] = &f.out_[f.out_index(0, cycle_, static_cast<Dir>(d))];
    sent_bits[d] = bits + static_cast<size_t>(d) * f.link_sends_.words();
    delta[d] = delta_[d];
  }
  Router* const routers = routers_;
  PacketHost* const hosts = f.packet_hosts_.data();
  uint64_t* const wake = f.packet_wake_.data();
  const uint64_t* const stall_out = stall_out_;

  // The host ports that step this cycle read a chain of lines, each found from the one
  // before (port, FIFO, wavelet; then the Router's ramp line for the offer), mostly from
  // memory: fetch them now, long before the loop reaches those routers. Beyond the port's
  // first line only where the router can take an offer (its ramp queue does not stall):
  // a port that cannot offer reads no more (unless a release is due), and under heavy
  // load most ports wait so, every cycle.
  for (uint32_t id = row_base_, end = row_base_ + static_cast<uint32_t>(t.cols); id < end; ++id) {
    if (wake[id] > cycle_) continue;
    const PacketHost& ph = hosts[id];
    __builtin_prefetch(ph.host);
    if ((stall_out[id] >> kRamp) & 1u) continue;
    __builtin_prefetch(reinterpret_cast<const char*>(ph.host) + 64);
    __builtin_prefetch(ph.fifo);
    __builtin_prefetch(ph.wavelet);
    __builtin_prefetch(&routers[id].ramp);
  }

  uint64_t moves = 0, progress = 0, slow_used = 0;
  int64_t queued_delta = 0;
  bool links_used = false;
  const size_t words = f.row_words();
  for (size_t wi = 0; wi < words; ++wi) {
    for (uint64_t m = active[wi]; m; m &= m - 1) {
      const uint64_t col_bit = m & -m;
      const int col = static_cast<int>(wi * 64) + std::countr_zero(m);
      const uint32_t id = row_base_ + static_cast<uint32_t>(col);
      // The queue entries two active routers on: the heads read below are far enough
      // from anything read recently that they come from L2 or beyond.
      if (const uint64_t ahead = (m & (m - 1)) & ((m & (m - 1)) - 1)) {
        const uint32_t a = row_base_ + static_cast<uint32_t>(wi * 64) +
                           static_cast<uint32_t>(std::countr_zero(ahead));
        const char* const e = reinterpret_cast<const char*>(
            entries_ + static_cast<size_t>(routers[a].slot_base) * static_cast<size_t>(cap));
        __builtin_prefetch(e);
        __builtin_prefetch(e + 64);
        __builtin_prefetch(e + 128);
      }
      Router& rt = routers[id];
      DirMask ports = 0;
      const Wavelet* to_ramp = nullptr;  // what goes on the off-ramp this cycle
      uint64_t busy = rt.busy;
      if (busy) {
        const uint32_t base = rt.slot_base;
        QueueSlot* const slots = slots_ + base;
        Wavelet* const entries = entries_ + static_cast<size_t>(base) * static_cast<size_t>(cap);
        // Candidates per output direction, as slot bits: heads whose receiver does not
        // stall them. Read only where `ports` has the direction's bit.
        uint32_t candidates[kNumDirs];
        for (uint64_t b = busy; b; b &= b - 1) {
          const auto i = static_cast<unsigned>(std::countr_zero(b));
          const QueueSlot& s = slots[i];
          const Dir o = first_dir(s.dest);
          bool blocked;
          if (o != kRamp) [[likely]] {
            blocked = (stall_out[static_cast<int64_t>(id) + delta[o]] >> (o ^ 1)) & 1u;
          } else {
            const HostPort* const host = hosts[id].host;
            blocked = host == nullptr ||
                      ((host->stall_to_router() >> entries[i * cap + s.head].color) & 1u);
          }
          if (blocked) continue;
          const auto mine = static_cast<uint32_t>(b & -b);
          candidates[o] = (ports & bit(o)) ? candidates[o] | mine : mine;
          ports |= bit(o);
        }
        uint64_t over = rt.over;
        uint32_t sent = 0;
        for (DirMask p = ports; p; p &= p - 1) {
          const Dir o = first_dir(p);
          const uint32_t c = candidates[o];
          unsigned i;
          uint32_t picked = c;
          if ((c & (c - 1)) == 0) {
            i = static_cast<unsigned>(std::countr_zero(c));
          } else {
            i = pick_round_robin(c, rt.last_pick[o]);
            picked = uint32_t{1} << i;
          }
          rt.last_pick[o] = static_cast<uint8_t>(i);
          QueueSlot& s = slots[i];
          Wavelet* const queue = entries + i * static_cast<unsigned>(cap);
          const unsigned head = ring_next(s.head);
          // A link (the routing function never points off the fabric), or the off-ramp.
          if (o != kRamp) [[likely]] {
            out[o][id] = queue[s.head];
            sent_bits[o][wi] |= col_bit;
          } else {
            to_ramp = &queue[s.head];  // stays there until phase B enqueues
            ++ramp_sent_count[id];
          }
          // Sent to its one Dest direction: the head leaves now [0301].
          const unsigned count = s.count - 1u;
          s.head = static_cast<uint8_t>(head);
          s.count = static_cast<uint8_t>(count);
          ++s.forwarded;
          over &= ~(uint64_t{s.src} & -static_cast<uint64_t>(count <= threshold));
          if (count == 0) {
            busy &= ~uint64_t{picked};
            s.dest = 0;
          } else {
            s.dest = routes_.next_mask(row_, col, queue[head].dest);
          }
          ++sent;
        }
        rt.busy = busy;
        rt.over = over;
        rt.queued -= sent;
        moves += sent;
        queued_delta -= sent;
        links_used |= (ports & ~bit(kRamp)) != 0;
        if (const DirMask slow = ports & slow_links) slow_used += popcount64(slow);
      }

      // The host port's cycle; it sees the router's stall toward the ramp of the previous
      // cycle: the ramp queue's. A cycle on which it can only wait is not stepped. (Without
      // a port, the wake cycle is kNever and nothing can go to the ramp: it is blocked.)
      const uint64_t wake_cycle = wake[id];
      if (cycle_ < wake_cycle) {
        progress += wake_cycle != kNever;  // waiting for a release, unless idle
        if (to_ramp == nullptr) continue;
      }
      PacketHost& ph = hosts[id];
      HostPort* const host = ph.host;
      if (cycle_ >= wake_cycle) {
        const ColorMask stall = ((stall_out[id] >> kRamp) & 1u) ? ~ColorMask{0} : 0;
        Wavelet w;
        const RampStep step = ph.step(cycle_, stall, w);
        progress += step.progressed;
        if (step.offered) {
          ++moves;
          if (w.color >= colors || ((stall >> w.color) & 1u)) [[unlikely]] {
            fail_offer(counters_, t, id, kRamp, w.color, f.config_.colors);
            continue;
          }
          rt.ramp.offer = w;
          rt.ramp.offer_cycle = cycle_;
          sent_bits[kRamp][wi] |= col_bit;
        }
      }
      if (to_ramp != nullptr) {
        counters_.record_delivery(*to_ramp, cycle_);
        host->accept(*to_ramp, cycle_);
      }
      wake[id] = host->quiet_until(cycle_ + 1);
    }
  }
  counters_.moves += moves;
  counters_.progress += progress;
  counters_.slow_links_used += slow_used;
  counters_.queued_delta += queued_delta;
  return links_used;
}

// Into the queue of input port `from` of router `id` [0317]. A port takes one wavelet per
// cycle, and its sender saw no stall [0333], so the queue has room.
template <int kCapacity>
template <bool kHop>
[[gnu::always_inline]] inline void Fabric::PacketRowPass<kCapacity>::enqueue(uint32_t id, int col,
                                                                             const Wavelet& w,
                                                                             Dir from) {
  Router& rt = routers_[id];
  const auto i = static_cast<unsigned>((packet_slots_[id] >> (4 * from)) & 15u);
  const uint32_t index = rt.slot_base + i;
  QueueSlot& s = slots_[index];
  const unsigned count = s.count;
  if (count >= static_cast<unsigned>(capacity())) [[unlikely]] {
    fail_enqueue(counters_, EnqueueFault::overflow, f_.topology(), id, w, from, from, true, from);
    return;
  }
  Wavelet& entry =
      entries_[static_cast<size_t>(index) * static_cast<size_t>(capacity()) + ring_tail(s.head, count)];
  if constexpr (kHop) {
    copy_with_one_more_hop(entry, w);
  } else {
    entry = w;
  }
  if (count == 0) {
    rt.busy |= uint64_t{1} << i;
    s.dest = routes_.next_mask(row_, col, w.dest);
  }
  s.count = static_cast<uint8_t>(count + 1);
  rt.over |= uint64_t{s.src} & -static_cast<uint64_t>(count + 1 > threshold_);
  ++rt.queued;
}

template <int kCapacity>
WAFERSIM_X86_64_V3_CLONE uint32_t Fabric::PacketRowPass<kCapacity>::receive_all(const uint64_t* active,
                                                       uint64_t* next_active,
                                                       uint32_t& next_count) {
  Fabric& f = f_;
  const Topology& t = f.topology();
  const size_t words = f.row_words();
  uint64_t received[kMaxPacketSide / 64] = {};
  uint64_t enqueued = 0, injected = 0;

  // Link arrivals, one input direction at a time [0315]: the routers of the sending row
  // that sent toward this row, shifted by the link's column step.
  for (int d = 0; d < kRamp; ++d) {
    const Dir in = static_cast<Dir>(d);
    const Dir o = opposite(in);  // the direction the senders sent toward
    const int from_row = row_ - drow(o);
    if (from_row < 0 || from_row >= t.rows) continue;
    const uint64_t sent_cycle = cycle_ - static_cast<uint64_t>(f.arrival_offset_[o]);
    const uint64_t* const sent = f.link_sends_.sent(from_row, sent_cycle, o);
    if (sent == nullptr) continue;
    // The output registers this direction reads: the senders', of the cycle they sent.
    const Wavelet* const regs = &f.out_[f.out_index(0, sent_cycle, o)] + delta_[in];
    const int step = dcol(o);
    for (size_t wi = 0; wi < words; ++wi) {
      // Receiver column c gets what sender column c - step sent.
      uint64_t m = sent[wi];
      if (step > 0) m = (m << 1) | (wi > 0 ? sent[wi - 1] >> 63 : 0);
      if (step < 0) m = (m >> 1) | (wi + 1 < words ? sent[wi + 1] << 63 : 0);
      received[wi] |= m;
      for (; m; m &= m - 1) {
        const int col = static_cast<int>(wi * 64) + std::countr_zero(m);
        const uint32_t id = row_base_ + static_cast<uint32_t>(col);
        enqueue<true>(id, col, regs[id], in);
        ++enqueued;
      }
    }
  }

  // The on-ramp offers of phase A of this cycle.
  if (const uint64_t* const offered = f.link_sends_.sent(row_, cycle_, kRamp)) {
    for (size_t wi = 0; wi < words; ++wi) {
      for (uint64_t m = offered[wi]; m; m &= m - 1) {
        const int col = static_cast<int>(wi * 64) + std::countr_zero(m);
        const uint32_t id = row_base_ + static_cast<uint32_t>(col);
        enqueue<false>(id, col, routers_[id].ramp.offer, kRamp);
        ++injected;
      }
    }
  }

  const uint64_t* const wake = f.packet_wake_.data();
  uint32_t processed = 0;
  next_count = 0;
  for (size_t wi = 0; wi < words; ++wi) {
    uint64_t next = 0;
    // Routers with work or arrivals, in column order; those with work stay active.
    for (uint64_t m = active[wi] | received[wi]; m; m &= m - 1) {
      const int col = static_cast<int>(wi * 64) + std::countr_zero(m);
      const uint32_t id = row_base_ + static_cast<uint32_t>(col);
      ++processed;
      Router& rt = routers_[id];
      // Stall when a queue holds more than depth-1 wavelets after this cycle [0333].
      stall_out_[id] = rt.over;

      // Work next cycle: wavelets queued, or a host port that is not idle (its wake cycle
      // says so; kNever too when there is no port). A host port has nothing to do at the
      // end of a cycle (HostPort::finish_cycle), so it is not read here.
      const bool has_work = rt.busy != 0 || wake[id] != kNever;
      rt.occupancy_sum += rt.queued;
      if (rt.queued > rt.occupancy_max) rt.occupancy_max = rt.queued;
      if (has_work) {
        next |= m & -m;
        ++next_count;
      }
    }
    next_active[wi] = next;
  }
  counters_.injected += injected;
  counters_.queued_delta += static_cast<int64_t>(enqueued + injected);
  return processed;
}

bool Fabric::packet_phase_a_row(int row, const uint64_t* active, uint64_t cycle,
                                CycleCounters& counters) {
  if (planes_live_) return plane_phase_a_row(row, cycle, counters);
  if (capacity_ == 2) return PacketRowPass<2>(*this, row, cycle, counters).send_all(active);
  return PacketRowPass<0>(*this, row, cycle, counters).send_all(active);
}

uint32_t Fabric::packet_phase_b_row(int row, const uint64_t* active, uint64_t* next_active,
                                    uint64_t cycle, CycleCounters& counters,
                                    uint32_t& next_count) {
  if (planes_live_) return plane_phase_b_row(row, active, next_active, cycle, counters, next_count);
  if (capacity_ == 2) {
    return PacketRowPass<2>(*this, row, cycle, counters)
        .receive_all(active, next_active, next_count);
  }
  return PacketRowPass<0>(*this, row, cycle, counters).receive_all(active, next_active, next_count);
}

}  // namespace wafersim::fabric
