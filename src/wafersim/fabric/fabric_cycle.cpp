// One row's share of a cycle (docs/fabric.md, "cycle contract").
//
// Phase A (send): each output direction's scheduler picks one ready color whose Dest
// includes it, whose head has not yet been sent there (Sent) and which the receiver does
// not stall (stall bits from the end of the previous cycle) [0318]-[0320]; the head is
// copied into this router's output register for that direction and posted on the arrival
// board for its receiver. A head that has now been sent to every Dest direction is
// dequeued [0301]. Endpoints step and may offer.
// Phase B (receive): arrivals from neighbours' output registers, the on-ramp and edge
// ports are enqueued by color [0317]; the off-ramp is delivered; per-color stall bits are
// recomputed from the occupancy after this cycle's enqueues and dequeues [0333].
//
// A row's routers are processed in one call (RowPass): the per-router work is inlined, with
// the fabric's arrays and the row's per-direction link steps in hand instead of recomputed
// per wavelet. Packet mode (NoC studies) has a pass of its own, fabric_packet_cycle.cpp.
#include <array>
#include <bit>

#include "wafersim/fabric/cycle_faults.hpp"
#include "wafersim/fabric/fabric.hpp"
#include "wafersim/fabric/host_port.hpp"

namespace wafersim::fabric {

namespace {

constexpr DirMask kDiagonals = bit(kNE) | bit(kSW) | bit(kNW) | bit(kSE);

// Bit counts of bytes: slot ranks without a popcount instruction (portable builds have
// none, and the bit-trick fallback costs a dozen instructions per lookup).
constexpr auto kByteBits = [] {
  std::array<uint8_t, 256> t{};
  for (int i = 0; i < 256; ++i) t[i] = static_cast<uint8_t>(std::popcount(static_cast<unsigned>(i)));
  return t;
}();

// Keys below `key` in `keys`: the position of `key`'s slot among the router's slots (keys
// are fabric colors, at most 32 bits).
[[gnu::always_inline]] inline unsigned rank_below(uint64_t keys, unsigned key) {
  const uint64_t x = keys & ((uint64_t{1} << key) - 1);
  return kByteBits[x & 0xFF] + kByteBits[(x >> 8) & 0xFF] + kByteBits[(x >> 16) & 0xFF] +
         kByteBits[(x >> 24) & 0xFF];
}

}  // namespace

Fabric::RowFrame::RowFrame(Fabric& f, int row, uint64_t cycle, CycleCounters& counters)
      : f_(f),
        row_(row),
        row_base_(static_cast<uint32_t>(row) * static_cast<uint32_t>(f.cols())),
        cycle_(cycle),
        counters_(counters),
        routers_(f.routers_.data()),
        slots_(f.queues_.slot_data()),
        entries_(f.queues_.entry_data()),
        stall_out_(f.stall_out_.data()) {}

class Fabric::RowPass : RowFrame {
 public:
  RowPass(Fabric& f, int row, uint64_t cycle, CycleCounters& counters)
      : RowFrame(f, row, cycle, counters),
        capacity_(f.capacity_),
        threshold_(f.stall_threshold()),
        slow_links_(f.topology().diag_hop_cycles == 2 ? kDiagonals : DirMask{0}),
        switched_(f.switched_colors_),
        sleep_from_(f.sleep_from_.data()) {
    const Topology& t = f.topology();
    for (int d = 0; d < kNumDirs; ++d) {
      delta_[d] = f.link_delta_[d];
      dcol_[d] = f.link_dcol_[d];
    }
    if (t.loop) {
      if (row == t.rows - 1) delta_[kN] -= t.size();
      if (row == 0) delta_[kS] += t.size();
    }
  }

  // Phase A for the routers set in `active`; true if a wavelet went on a link.
  bool send_all(const uint64_t* active) {
    return switched_ ? send_rows<true>(active) : send_rows<false>(active);
  }
  // Phase B for the routers set in `active` or receiving; see Fabric::phase_b_row.
  uint32_t receive_all(const uint64_t* active, uint64_t* next_active, uint32_t& next_count);

 private:
  // Phase A's row loop. kHolds: the fabric has switches, whose positions may hold senders
  // (without any, the loop is the one it was before switches held anything).
  template <bool kHolds>
  bool send_rows(const uint64_t* active);
  // Helpers are inlined into the row loops: they run for every router of the row.
  // `switched`: the switched colors the router carries (0 unless kHolds).
  template <bool kHolds>
  [[gnu::always_inline]] void send(Router& rt, uint32_t id, int col, uint64_t switched);
  [[gnu::always_inline]] void post(Dir o, uint32_t id, int col);
  [[gnu::always_inline]] uint64_t stall_toward(const Router& rt, uint32_t id, Dir o) const;
  [[gnu::always_inline]] unsigned pick(const Router& rt, const QueueSlot* slots,
                                       uint64_t candidates, Dir o) const;
  template <bool kHolds>
  [[gnu::always_inline]] void step_endpoint(const Router& rt, uint32_t id, PortAttachment& a,
                                            Dir port, uint64_t switched);
  // Switched colors (among `colors`) whose switch holds what comes from the sender:
  // across link `o` (the receiver's switch), or from this router's endpoint on `port`.
  // Off the fast path: called only for routers that carry a switched color.
  [[gnu::noinline]] uint64_t held_toward(const Router& rt, uint32_t id, Dir o,
                                         uint64_t colors) const;
  [[gnu::noinline]] uint64_t held_from(const Router& rt, Dir port, uint64_t colors) const;
  [[gnu::always_inline]] bool receive(Router& rt, uint32_t id, DirMask arrivals);
  [[gnu::always_inline]] void enqueue(Router& rt, uint32_t id, const Wavelet& w,
                                      Dir from, uint64_t& arrived, uint8_t* arrived_from);
  void deliver(PortAttachment& a, const Wavelet& w);
  // Runtime switches (route_switch.hpp), off the fast path: a control wavelet of a
  // switched color was queued, or a switched color's head leaves.
  [[gnu::noinline]] void switch_arrival(QueueSlot& s, uint32_t id, const Wavelet& w);
  [[gnu::noinline]] void switch_departure(QueueSlot& s, const Wavelet& head);
  [[gnu::noinline]] void refuse_switched(const QueueSlot& s, uint32_t id, const Wavelet& w,
                                         Dir from, bool another, Dir other);
  [[gnu::always_inline]] void finish_endpoint(PortAttachment& a);
  // Sleeping ramp endpoints (Fabric::asleep_from).
  [[gnu::always_inline]] bool asleep(uint32_t id) const { return sleep_from_[id] != kNever; }
  bool try_sleep(uint32_t id, PortAttachment& ramp);
  void wake(uint32_t id);
  bool wake_if_due(uint32_t id);

  const int capacity_;
  const int threshold_;       // a queue holding more stalls its sources [0333]
  const DirMask slow_links_;  // diagonal directions when their hops take 2 cycles
  const uint64_t switched_;   // colors with a switch somewhere (Fabric::switched_colors)
  bool links_used_ = false;
  uint64_t* const sleep_from_;  // the fabric's, by router id
  // The counters the per-router work bumps, kept in the pass (registers, one cache line per
  // thread) and added to the row's CycleCounters once, when the pass ends.
  struct Tally {
    uint64_t moves = 0;
    uint64_t progress = 0;
    uint64_t slow_links_used = 0;
    uint64_t injected = 0;
    int64_t queued_delta = 0;
    uint64_t asleep_processed = 0;
  } tally_;
  void flush_tally() {
    counters_.moves += tally_.moves;
    counters_.progress += tally_.progress;
    counters_.slow_links_used += tally_.slow_links_used;
    counters_.injected += tally_.injected;
    counters_.queued_delta += tally_.queued_delta;
    counters_.asleep_processed += tally_.asleep_processed;
  }
  int64_t delta_[kNumDirs];  // router-id step across each link, loop links folded in
  int dcol_[kNumDirs];       // column step across each link
  // Phase A: this cycle's output registers of each direction; phase B: the registers each
  // input direction reads (the sender's, of the cycle it sent). Indexed by router id.
  Wavelet* out_[kNumDirs] = {};
  Wavelet* off_ramp_ = nullptr;        // phase B: this cycle's ramp output registers
  DirMask* post_dirs_[kNumDirs] = {};  // phase A: the arrival board of each link's receivers
  uint64_t* post_marks_[kNumDirs] = {};  // phase A: ... and the receivers' row marks
  uint64_t* sent_count_[kNumDirs] = {};  // phase A: each direction's send counters
};

// Color mode: the stall bits that gate output `o`, bit c set when color c may not go.
// They come from the end of the previous cycle: a neighbour's per-color stall [0334], or
// the endpoint's [0330].
inline uint64_t Fabric::RowPass::stall_toward(const Router& rt, uint32_t id,
                                                        Dir o) const {
  constexpr uint64_t kAll = ~uint64_t{0};
  if (o == kRamp) return rt.ramp.endpoint == nullptr ? kAll : rt.ramp.stall_in;
  if (rt.edge_ports & bit(o)) return f_.attachment(id, o)->stall_in;  // an edge port
  // An edge port with no endpoint (routes cannot start a run like that).
  if (!(rt.links & bit(o))) return kAll;
  return stall_out_[static_cast<int64_t>(id) + delta_[o]];
}

// A sender whose direction the receiver's switch position does not take is held: the
// color counts as stalled toward it. Like the stall bits, the arrival position comes from
// the end of the previous cycle (it moves in phase B), so the hold lifts one cycle after
// the control wavelet that moves the switch was queued.
uint64_t Fabric::RowPass::held_toward(const Router& rt, uint32_t id, Dir o,
                                      uint64_t colors) const {
  if (!(rt.links & bit(o))) return 0;  // toward an endpoint: no switch there
  const Router& nb = routers_[static_cast<int64_t>(id) + delta_[o]];
  const DirMask in = bit(opposite(o));
  uint64_t held = 0;
  for (uint64_t m = colors & nb.keys; m; m &= m - 1) {
    const unsigned c = static_cast<unsigned>(std::countr_zero(m));
    if (slots_[nb.slot_base + rank_below(nb.keys, c)].hold & in) held |= uint64_t{1} << c;
  }
  return held;
}

uint64_t Fabric::RowPass::held_from(const Router& rt, Dir port, uint64_t colors) const {
  uint64_t held = 0;
  for (uint64_t m = colors; m; m &= m - 1) {
    const unsigned c = static_cast<unsigned>(std::countr_zero(m));
    if (slots_[rt.slot_base + rank_below(rt.keys, c)].hold & bit(port)) {
      held |= uint64_t{1} << c;
    }
  }
  return held;
}

// The scheduler of output `o`: candidates are slot positions (slots are in color order, so
// cycling over positions cycles over colors) [0320].
inline unsigned Fabric::RowPass::pick(const Router& rt, const QueueSlot* slots,
                                               uint64_t candidates, Dir o) const {
  if (f_.config_.scheduler == SchedulerPolicy::priority) {
    uint64_t high = 0;
    for (uint64_t m = candidates; m; m &= m - 1) {
      const unsigned i = static_cast<unsigned>(std::countr_zero(m));
      if ((f_.high_priority_ >> slots[i].key) & 1u) high |= uint64_t{1} << i;
    }
    if (high) candidates = high;
  }
  return pick_round_robin(candidates, rt.last_pick[o]);
}

// A wavelet put on link `o` reaches the receiver's phase B (this cycle, or the next on a
// 2-cycle link) through the arrival board.
inline void Fabric::RowPass::post(Dir o, uint32_t id, int col) {
  post_dirs_[o][static_cast<int64_t>(id) + delta_[o]] |= bit(static_cast<Dir>(o ^ 1));
  const int c = col + dcol_[o];
  post_marks_[o][c >> 6] |= uint64_t{1} << (c & 63);
  links_used_ = true;
}

// One router's schedulers (phase A): at most one wavelet per output direction [0315],
// chosen independently per direction [0319].
template <bool kHolds>
inline void Fabric::RowPass::send(Router& rt, uint32_t id, int col, uint64_t switched) {
  rt.out_cycle = cycle_;
  rt.out_valid = 0;
  if (rt.busy == 0) return;
  QueueSlot* const slots = slots_ + rt.slot_base;
  Wavelet* const entries = entries_ + static_cast<size_t>(rt.slot_base) * capacity_;

  // Candidates per output direction (as slot positions): heads not yet sent there whose
  // receiver does not stall them.
  uint64_t candidates[kNumDirs];
  DirMask ports = 0;
  // Each direction's stall bits are read once.
  uint64_t stall[kNumDirs];
  DirMask seen = 0;
  for (uint64_t m = rt.busy; m; m &= m - 1) {
    const unsigned i = static_cast<unsigned>(std::countr_zero(m));
    const QueueSlot& s = slots[i];
    for (DirMask pending = static_cast<DirMask>(s.dest & ~s.sent); pending;
         pending &= pending - 1) {
      const Dir o = first_dir(pending);
      if (!(seen & bit(o))) {
        seen |= bit(o);
        stall[o] = stall_toward(rt, id, o);
        if constexpr (kHolds) {
          if (switched) stall[o] |= held_toward(rt, id, o, switched);
        }
        candidates[o] = 0;
      }
      if ((stall[o] >> s.key) & 1u) continue;
      ports |= bit(o);
      candidates[o] |= uint64_t{1} << i;
    }
  }
  if (ports == 0) return;
  rt.out_valid = ports;
  tally_.moves += static_cast<uint64_t>(kByteBits[ports & 0xFF] + kByteBits[ports >> 8]);
  if (ports & slow_links_) {
    const unsigned slow = ports & slow_links_;
    tally_.slow_links_used += kByteBits[slow & 0xFF];
  }

  uint64_t picked = 0;
  for (DirMask m = ports; m; m &= m - 1) {
    const Dir o = first_dir(m);
    const uint64_t c = candidates[o];
    const unsigned i = (c & (c - 1)) == 0 ? static_cast<unsigned>(std::countr_zero(c))
                                          : pick(rt, slots, c, o);
    rt.last_pick[o] = static_cast<uint8_t>(i);
    QueueSlot& s = slots[i];
    Wavelet* const queue = entries + i * capacity_;
    out_[o][id] = queue[s.head];
    ++sent_count_[o][id];
    if (rt.links & bit(o)) post(o, id, col);  // to another router
    s.sent |= bit(o);
    picked |= uint64_t{1} << i;
  }

  // A head sent to every Dest direction leaves; the next wavelet of its color may move
  // from the next cycle on [0301].
  for (uint64_t m = picked; m; m &= m - 1) {
    const unsigned i = static_cast<unsigned>(std::countr_zero(m));
    QueueSlot& s = slots[i];
    if ((s.sent & s.dest) != s.dest) continue;
    if (s.switch_id != kNoSwitch) [[unlikely]] {
      switch_departure(s, entries[i * capacity_ + s.head]);
    }
    s.sent = 0;
    s.head = ring_next(s.head, capacity_);
    --s.count;
    ++s.forwarded;
    --rt.queued;
    --tally_.queued_delta;
    rt.over &= ~(static_cast<uint64_t>(s.count <= threshold_) << s.key);
    if (s.count == 0) rt.busy &= ~(uint64_t{1} << i);
  }
}

template <bool kHolds>
inline void Fabric::RowPass::step_endpoint(const Router& rt, uint32_t id, PortAttachment& a,
                                           Dir port, uint64_t switched) {
  if (a.endpoint == nullptr) return;  // an idle endpoint's step is cheap: no idle() call
  // The router's stall toward this port, per color, and what its switches hold.
  ColorMask stall = stall_out_[id];
  if constexpr (kHolds) {
    if (switched) stall |= held_from(rt, port, switched);
  }
  Wavelet w;
  const RampStep step =
      a.host ? a.host->step(cycle_, stall, w) : a.endpoint->step(cycle_, stall, w);
  if (step.progressed) ++tally_.progress;
  if (!step.offered) return;
  ++tally_.moves;
  if (w.color >= f_.config_.colors || ((stall >> w.color) & 1u)) [[unlikely]] {
    fail_offer(counters_, f_.topology(), id, port, w.color, f_.config_.colors);
    return;
  }
  a.offer = w;
  a.offer_cycle = cycle_;
}

template <bool kHolds>
bool Fabric::RowPass::send_rows(const uint64_t* active) {
  Fabric& f = f_;
  const Topology& t = f.topology();
  for (int d = 0; d < kNumDirs; ++d) {
    const Dir o = static_cast<Dir>(d);
    out_[d] = &f.out_[f.out_index(0, cycle_, o)];
    sent_count_[d] = &f.sent_count_[static_cast<size_t>(d) * f.routers_.size()];
    if (o == kRamp) continue;
    int to_row = row_ + drow(o);
    if (t.loop && to_row < 0) to_row += t.rows;
    if (t.loop && to_row >= t.rows) to_row -= t.rows;
    if (to_row < 0 || to_row >= t.rows) continue;  // no router of this row has that link
    const int source = ArrivalBoard::source_of(o);
    const uint64_t arrival = cycle_ + static_cast<uint64_t>(f.arrival_offset_[d]);
    post_dirs_[d] = f.arrivals_.dirs(source, arrival);
    post_marks_[d] = f.arrivals_.marks(source, arrival, to_row);
  }
  const size_t words = f.row_words();
  for (size_t wi = 0; wi < words; ++wi) {
    for (uint64_t m = active[wi]; m; m &= m - 1) {
      const int col = static_cast<int>(wi * 64) + std::countr_zero(m);
      const uint32_t id = row_base_ + static_cast<uint32_t>(col);
      Router& rt = routers_[id];
      const uint64_t switched = kHolds ? rt.keys & switched_ : 0;
      send<kHolds>(rt, id, col, switched);
      // The endpoints' own cycle; they see the router's stall bits of the previous cycle.
      // A sleeping one only counts, later.
      if (!asleep(id) || wake_if_due(id))
        step_endpoint<kHolds>(rt, id, rt.ramp, kRamp, switched);
      for (uint8_t e = rt.edge_ports; e; e &= static_cast<uint8_t>(e - 1)) {
        const Dir d = first_dir(e);
        step_endpoint<kHolds>(rt, id, *f.attachment(id, d), d, switched);
      }
    }
  }
  flush_tally();
  return links_used_;
}

inline void Fabric::RowPass::enqueue(Router& rt, uint32_t id, const Wavelet& w, Dir from,
                                     uint64_t& arrived, uint8_t* arrived_from) {
  const unsigned key = w.color;
  if (key >= static_cast<unsigned>(f_.config_.colors) || !rt.has(key)) [[unlikely]] {
    fail_enqueue(counters_, EnqueueFault::no_route, f_.topology(), id, w, from, from, false, key);
    return;
  }
  const unsigned i = rank_below(rt.keys, key);
  const uint32_t index = rt.slot_base + i;
  QueueSlot& s = slots_[index];
  if (!(s.src & bit(from))) [[unlikely]] {
    if (s.switch_id != kNoSwitch) {
      const bool another = (arrived >> i) & 1u;
      refuse_switched(s, id, w, from, another,
                      another ? static_cast<Dir>(arrived_from[i]) : from);
    } else {
      fail_enqueue(counters_, EnqueueFault::not_a_source, f_.topology(), id, w, from, from,
                   false, key);
    }
    return;
  }
  if ((arrived >> i) & 1u) [[unlikely]] {
    fail_enqueue(counters_, EnqueueFault::two_sources, f_.topology(), id, w, from,
                 static_cast<Dir>(arrived_from[i]), false, key);
    return;
  }
  arrived |= uint64_t{1} << i;
  arrived_from[i] = from;
  if (s.count >= capacity_) [[unlikely]] {
    fail_enqueue(counters_, EnqueueFault::overflow, f_.topology(), id, w, from, from, false, key);
    return;
  }
  int tail = s.head + s.count;  // ring position without a division or a branch
  tail -= capacity_ & -static_cast<int>(tail >= capacity_);
  entries_[static_cast<size_t>(index) * capacity_ + static_cast<size_t>(tail)] = w;
  if (s.count == 0) rt.busy |= uint64_t{1} << i;
  ++s.count;
  rt.over |= static_cast<uint64_t>(s.count > threshold_) << key;
  ++rt.queued;
  ++rt.enqueued;
  ++tally_.queued_delta;
  if (w.ctrl && s.switch_id != kNoSwitch) [[unlikely]] switch_arrival(s, id, w);
}

// The control wavelet was taken in with the position in force; later arrivals see the
// position its command leaves.
void Fabric::RowPass::switch_arrival(QueueSlot& s, uint32_t id, const Wavelet& w) {
  RouteSwitch& sw = f_.switches_[s.switch_id];
  const unsigned command = switch_command(w);
  if (command == kSwitchReserved) {
    fail_switch_command(counters_, f_.topology(), id, w);
    return;
  }
  sw.pos_in = sw.next(sw.pos_in, command);
  s.src = sw.src[sw.pos_in];
  s.hold = sw.held(sw.pos_in);
}

// A wavelet of a switched color from a direction its arrival position does not take.
// Senders are held from such directions, so it is one of: a second arrival of the color
// this cycle, after a control wavelet that came first moved the switch [0302]; a wavelet
// that was on a 2-cycle link when the switch moved away from its direction; or one from a
// direction that no position takes.
void Fabric::RowPass::refuse_switched(const QueueSlot& s, uint32_t id, const Wavelet& w,
                                      Dir from, bool another, Dir other) {
  if (another) {
    fail_enqueue(counters_, EnqueueFault::two_sources, f_.topology(), id, w, from, other, false,
                 s.key);
    return;
  }
  fail_switched_arrival(counters_, f_.topology(), id, w, from, f_.switches_[s.switch_id]);
}

// The head went to every Dest direction of the position in force; a control wavelet then
// moves the switch for the wavelets behind it.
void Fabric::RowPass::switch_departure(QueueSlot& s, const Wavelet& head) {
  RouteSwitch& sw = f_.switches_[s.switch_id];
  ++sw.forwarded[sw.pos_out];
  if (!head.ctrl) return;
  sw.pos_out = sw.next(sw.pos_out, switch_command(head));
  s.dest = sw.dest[sw.pos_out];
}

void Fabric::RowPass::deliver(PortAttachment& a, const Wavelet& w) {
  if (a.endpoint == nullptr) [[unlikely]] {
    fail_missing_endpoint(counters_);
    return;
  }
  // A switch-only control wavelet ends here: only routers act on it.
  if (w.ctrl && (w.data & kSwitchOnlyBit) && ((f_.switched_colors_ >> w.color) & 1u))
      [[unlikely]] {
    return;
  }
  counters_.record_delivery(w, cycle_);
  if (a.host) a.host->accept(w, cycle_);
  else a.endpoint->accept(w, cycle_);
}

// The end of an endpoint's cycle in phase B: finish_cycle, then its stall bits for next
// cycle [0330] (the caller asks idle() afterwards when it needs to).
inline void Fabric::RowPass::finish_endpoint(PortAttachment& a) {
  if (a.host) {
    a.host->finish_cycle(cycle_);
    a.stall_in = a.host->stall_to_router();
  } else {
    a.endpoint->finish_cycle(cycle_);
    a.stall_in = a.endpoint->stall_to_router();
  }
}

// A ramp endpoint that will only count from the next cycle on sleeps: it is not stepped
// or finished until it wakes, and as it is then idle for its router, the router leaves
// the active set when it has no work of its own.
bool Fabric::RowPass::try_sleep(uint32_t id, PortAttachment& ramp) {
  const uint64_t span = ramp.endpoint->sleep_span();
  if (span == 0) return false;
  sleep_from_[id] = cycle_ + 1;
  if (span == RampEndpoint::kUntilDelivery) {
    f_.sleep_until_[id] = kNever;
    ++counters_.untimed_asleep_delta;
  } else {
    f_.sleep_until_[id] = cycle_ + 1 + span;
    ++counters_.timed_asleep_delta;
  }
  counters_.fell_asleep.push_back(id);
  return true;
}

// A wavelet for a sleeping ramp endpoint: it counts its cycles through this one (whose
// phase A it slept through too) and takes the wavelet awake.
void Fabric::RowPass::wake(uint32_t id) {
  if (f_.sleep_until_[id] != kNever) --counters_.timed_asleep_delta;
  else --counters_.untimed_asleep_delta;
  counters_.slept_cycles += f_.wake_endpoint(id, cycle_ + 1);
}

// A timed sleep that ends with this cycle (the simulator has put the router back in the
// active set and counts the endpoint as awake, sim/sleepers.hpp): the endpoint counts the
// cycles it slept here, in its row's phase A, and then steps.
bool Fabric::RowPass::wake_if_due(uint32_t id) {
  if (f_.sleep_until_[id] > cycle_) return false;
  counters_.slept_cycles += f_.wake_endpoint(id, cycle_);
  return true;
}

// One router's phase B.
inline bool Fabric::RowPass::receive(Router& rt, uint32_t id, DirMask arrivals) {
  uint64_t arrived = 0;
  uint8_t arrived_from[64];
  if (asleep(id)) ++tally_.asleep_processed;

  // Neighbours' output registers that hold a wavelet for this router [0315], [0317].
  for (DirMask m = arrivals; m; m &= m - 1) {
    const Dir in = first_dir(m);
    Wavelet w = out_[in][static_cast<int64_t>(id) + delta_[in]];
    ++w.hops;
    enqueue(rt, id, w, in, arrived, arrived_from);
  }

  // The on-ramp and edge ports offered in phase A of this cycle.
  if (rt.ramp.offer_cycle == cycle_) {
    ++tally_.injected;
    enqueue(rt, id, rt.ramp.offer, kRamp, arrived, arrived_from);
  }
  for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
    const Dir d = first_dir(m);
    PortAttachment& a = *f_.attachment(id, d);
    if (a.offer_cycle == cycle_) {
      ++tally_.injected;
      enqueue(rt, id, a.offer, d, arrived, arrived_from);
    }
  }

  // What this router sent to its own endpoints (off-ramp, edge ports) this cycle.
  if (rt.out_cycle == cycle_) {
    const DirMask v = rt.out_valid;
    if (v & bit(kRamp)) {
      if (asleep(id)) [[unlikely]] wake(id);
      deliver(rt.ramp, off_ramp_[id]);
    }
    for (uint8_t m = static_cast<uint8_t>(rt.edge_ports & v); m;
         m &= static_cast<uint8_t>(m - 1)) {
      const Dir d = first_dir(m);  // edge_ports only holds border couplings
      deliver(*f_.attachment(id, d), f_.out_register(id, cycle_, d));
    }
  }

  // Stall when a queue holds more than depth-1 wavelets after this cycle [0333] (kept up
  // to date by every enqueue and dequeue).
  stall_out_[id] = rt.over;

  bool busy = rt.busy != 0;
  if (rt.ramp.endpoint && !asleep(id)) {
    finish_endpoint(rt.ramp);
    if (rt.ramp.host) {
      busy = busy || !rt.ramp.host->idle();
    } else if (!rt.ramp.endpoint->idle()) {
      busy = busy || !(f_.endpoint_sleep_ && try_sleep(id, rt.ramp));
    }
  }
  for (uint8_t m = rt.edge_ports; m; m &= static_cast<uint8_t>(m - 1)) {
    PortAttachment& a = *f_.attachment(id, first_dir(m));
    finish_endpoint(a);
    busy = busy || !(a.host ? a.host->idle() : a.endpoint->idle());
  }
  rt.occupancy_sum += rt.queued;
  if (rt.queued > rt.occupancy_max) rt.occupancy_max = rt.queued;
  return busy;
}

uint32_t Fabric::RowPass::receive_all(const uint64_t* active, uint64_t* next_active,
                                               uint32_t& next_count) {
  Fabric& f = f_;
  for (int d = 0; d < kRamp; ++d) {
    const Dir in = static_cast<Dir>(d);
    const uint64_t sent = cycle_ - static_cast<uint64_t>(f.arrival_offset_[d]);
    out_[d] = &f.out_[f.out_index(0, sent, opposite(in))];
  }
  off_ramp_ = &f.out_[f.out_index(0, cycle_, kRamp)];
  DirMask* from_dirs[ArrivalBoard::kSources];
  uint64_t* from_marks[ArrivalBoard::kSources];
  for (int s = 0; s < ArrivalBoard::kSources; ++s) {
    from_dirs[s] = f.arrivals_.dirs(s, cycle_);
    from_marks[s] = f.arrivals_.marks(s, cycle_, row_);
  }
  uint32_t processed = 0;
  next_count = 0;
  const size_t words = f.row_words();
  for (size_t wi = 0; wi < words; ++wi) {
    const uint64_t received = from_marks[0][wi] | from_marks[1][wi] | from_marks[2][wi];
    from_marks[0][wi] = from_marks[1][wi] = from_marks[2][wi] = 0;
    uint64_t next = 0;
    // Routers with work or arrivals, in column order; those with work stay active.
    for (uint64_t m = active[wi] | received; m; m &= m - 1) {
      const int b = std::countr_zero(m);
      const int col = static_cast<int>(wi * 64) + b;
      const uint32_t id = row_base_ + static_cast<uint32_t>(col);
      // Read and cleared whether or not it received: cheaper than a mispredicted branch.
      const auto arrivals =
          static_cast<DirMask>(from_dirs[0][id] | from_dirs[1][id] | from_dirs[2][id]);
      from_dirs[0][id] = from_dirs[1][id] = from_dirs[2][id] = 0;
      ++processed;
      if (receive(routers_[id], id, arrivals)) {
        next |= uint64_t{1} << b;
        ++next_count;
      }
    }
    next_active[wi] = next;
  }
  flush_tally();
  return processed;
}

Fabric::RowSends Fabric::phase_a_row(int row, const uint64_t* active, uint64_t cycle,
                                     CycleCounters& counters) {
  RowSends sends;
  sends.links = config_.packet_mode ? packet_phase_a_row(row, active, cycle, counters)
                                    : RowPass(*this, row, cycle, counters).send_all(active);
  return sends;
}

uint32_t Fabric::phase_b_row(int row, const uint64_t* active, uint64_t* next_active,
                             uint64_t cycle, CycleCounters& counters, uint32_t& next_count) {
  return config_.packet_mode
             ? packet_phase_b_row(row, active, next_active, cycle, counters, next_count)
             : RowPass(*this, row, cycle, counters).receive_all(active, next_active, next_count);
}

}  // namespace wafersim::fabric
