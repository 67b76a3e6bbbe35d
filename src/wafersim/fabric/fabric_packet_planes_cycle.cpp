// One row's share of a cycle in packet mode with the default queues, on bit planes
// (packet_planes.hpp; docs/fabric.md "Packet mode").
//
// The cycle contract and what packet mode allows are those of fabric_packet_cycle.cpp:
// one queue per input port, one Dest direction per head, a host port or nothing on each
// ramp. With queues of two entries, every decision of phase A is a word operation over
// the row: for each output direction o, the heads that want o, minus those whose receiver
// stalls (the neighbouring row's stall plane, shifted by the link's column step)
// [0318]-[0320], [0333], give each router's candidates; the round-robin pick among them
// [0320] is a prefix scan over the input directions. Only moving a wavelet and routing a
// new head are done per wavelet. A link's wavelet is written into the receiver's queue
// in phase A (see below why that is the same cycle); phase B counts the arrivals into the
// planes one input direction at a time over the whole row, and its stall bits are the
// "holds two" planes.
//
// It computes exactly what the general pass computes (the same sends, in the same cycles,
// with the same round-robin pointers); tests compare both passes on the same traffic.
#include <bit>
#include <cstddef>

#include "wafersim/fabric/cycle_faults.hpp"
#include "wafersim/fabric/fabric.hpp"
#include "wafersim/fabric/host_port.hpp"
#include "wafersim/fabric/packet_pass_common.hpp"

namespace wafersim::fabric {

namespace {
constexpr int kMaxDirs = PacketPlanes::kMaxDirs;
constexpr int kMaxWords = PacketPlanes::kMaxWords;

// Word `wi` of `plane` moved so that bit c holds bit c + step of the plane (step -1..1):
// what the router `step` columns away has.
[[gnu::always_inline]] inline uint64_t shifted_word(const uint64_t* plane, size_t wi, size_t words,
                                                    int step) {
  if (step > 0) return (plane[wi] >> 1) | (wi + 1 < words ? plane[wi + 1] << 63 : 0);
  if (step < 0) return (plane[wi] << 1) | (wi > 0 ? plane[wi - 1] >> 63 : 0);
  return plane[wi];
}
}  // namespace

class Fabric::PlaneRowPass : RowFrame {
 public:
  PlaneRowPass(Fabric& f, int row, uint64_t cycle, CycleCounters& counters)
      : RowFrame(f, row, cycle, counters), p_(f.planes_) {
    const size_t stride = static_cast<size_t>(p_.count()) * p_.words();  // want(o, k) to want(o + 1, k)
    for (int i = 0; i < PacketRouteTable::kCases; ++i) want_offset_[i] = p_.route_case[i] * stride;
  }

  // Phase A for the row; true if a wavelet went on a link.
  WAFERSIM_X86_64_V3_CLONE bool send_all();
  // Phase B; see Fabric::phase_b_row.
  WAFERSIM_X86_64_V3_CLONE uint32_t receive_all(const uint64_t* active, uint64_t* next_active,
                                                uint32_t& next_count);

 private:
  template <bool kCopy>
  uint64_t enqueue(int k, const uint64_t* arrive, const Wavelet* from);

  PacketPlanes& p_;
  // Per routing case (PacketRouteTable::case_of): from want(0, k) to the plane of the
  // output it goes to, want(o, k).
  size_t want_offset_[PacketRouteTable::kCases];
};

WAFERSIM_X86_64_V3_CLONE bool Fabric::PlaneRowPass::send_all() {
  Fabric& f = f_;
  PacketPlanes& p = p_;
  const Topology& t = f.topology();
  const int n = p.count();
  const size_t words = p.words();
  const int ramp = p.index(kRamp);
  const auto colors = static_cast<unsigned>(f.config_.colors);
  PacketHost* const hosts = f.packet_hosts_.data();
  uint64_t* const wake = f.packet_wake_.data();
  uint64_t* const sent_bits = f.link_sends_.begin_row(row_, cycle_);
  const uint64_t* const ramp_stall = p.stall(row_, ramp);
  uint64_t moves = 0, progress = 0;

  // The host ports that step this cycle (HostPort::quiet_until), and the lines their step
  // reads, fetched now, long before the loop below reaches them; see fabric_packet_cycle.cpp.
  uint64_t due[kMaxWords] = {};
  for (int col = 0; col < t.cols; ++col) {
    const uint64_t wake_cycle = wake[row_base_ + static_cast<uint32_t>(col)];
    // Waiting for a release is progress; an idle port (kNever) makes none.
    progress += (wake_cycle > cycle_) & (wake_cycle != kNever);
    due[col >> 6] |= uint64_t{wake_cycle <= cycle_} << (col & 63);
  }
  for (size_t wi = 0; wi < words; ++wi) {
    for (uint64_t m = due[wi]; m; m &= m - 1) {
      const unsigned pos = static_cast<unsigned>(std::countr_zero(m));
      const uint32_t id = row_base_ + static_cast<uint32_t>(wi * 64 + pos);
      const PacketHost& ph = hosts[id];
      __builtin_prefetch(ph.host);
      if ((ramp_stall[wi] >> pos) & 1u) continue;
      __builtin_prefetch(reinterpret_cast<const char*>(ph.host) + 64);
      __builtin_prefetch(ph.fifo);
      __builtin_prefetch(ph.wavelet);
      __builtin_prefetch(&p.offers[id]);
    }
  }

  // Every output's scheduler at once, from the stall bits of the end of last cycle.
  // picks[o][k]: the routers whose output o sends the head of input k.
  uint64_t picks[kMaxDirs][kMaxDirs][kMaxWords];
  uint64_t sent[kMaxDirs][kMaxWords];
  unsigned scheduled = 0;  // outputs with a pick, as bits
  for (int o = 0; o < n; ++o) {
    const Dir od = p.dir(o);
    uint64_t any_want = 0;
    for (int k = 0; k < n; ++k) {
      for (size_t wi = 0; wi < words; ++wi) any_want |= p.want(row_, o, k)[wi];
    }
    if (any_want == 0) continue;
    // Routers whose receiver on o takes a wavelet this cycle.
    uint64_t open[kMaxWords];
    if (od == kRamp) {
      for (size_t wi = 0; wi < words; ++wi) open[wi] = p.ramp_open(row_)[wi];
    } else {
      const int to_row = row_ + drow(od);  // the routing function never points off the fabric
      const uint64_t* const stall = p.stall(to_row, p.index(opposite(od)));
      for (size_t wi = 0; wi < words; ++wi) open[wi] = ~shifted_word(stall, wi, words, dcol(od));
    }
    for (size_t wi = 0; wi < words; ++wi) {
      uint64_t candidates[kMaxDirs];
      for (int k = 0; k < n; ++k) candidates[k] = p.want(row_, o, k)[wi] & open[wi];
      if (od == kRamp) {
        // A host port with a sink limit stalls some colors [0330]: per head.
        uint64_t limited = 0;
        for (int k = 0; k < n; ++k) limited |= p.want(row_, o, k)[wi];
        limited &= p.ramp_limited(row_)[wi];
        for (; limited; limited &= limited - 1) {
          const unsigned pos = static_cast<unsigned>(std::countr_zero(limited));
          const uint32_t id = row_base_ + static_cast<uint32_t>(wi * 64 + pos);
          const ColorMask stall = hosts[id].host->stall_to_router();
          for (int k = 0; k < n; ++k) {
            if (!((p.want(row_, o, k)[wi] >> pos) & 1u)) continue;
            const Wavelet& w = p.queue(k, id)[(p.head(row_, k)[wi] >> pos) & 1u];
            candidates[k] |= uint64_t{((stall >> w.color) & 1u) == 0} << pos;
          }
        }
      }
      // Round-robin [0320]: the first candidate after the last pick, else the first.
      // after[k]: candidates k of routers whose last pick is below k.
      uint64_t after[kMaxDirs];
      uint64_t any = 0, any_after = 0, below = 0;
      for (int k = 0; k < n; ++k) {
        after[k] = candidates[k] & below;
        below |= p.last(row_, o, k)[wi];
        any |= candidates[k];
        any_after |= after[k];
      }
      uint64_t taken = 0;
      for (int k = 0; k < n; ++k) {
        const uint64_t pick = (after[k] | (candidates[k] & ~any_after)) & ~taken;
        taken |= pick;
        picks[o][k][wi] = pick;
        uint64_t& last = p.last(row_, o, k)[wi];
        last = (last & ~any) | pick;
        p.want(row_, o, k)[wi] &= ~pick;  // the head leaves: it has one Dest [0301]
      }
      sent[o][wi] = any;
    }
    scheduled |= 1u << o;
  }

  // Each picked head leaves its queue, and the wavelet behind it, if any, becomes the head
  // and is routed [0318]. A head bound for the off-ramp stays in its entry (to_ramp points at
  // it) until the host section below delivers it. A head bound for a link goes straight into
  // the receiver's queue, at its tail as of the end of the last cycle (the tail plane): the
  // receiver had room [0333], and its own dequeue this cycle does not move the tail (one
  // wavelet: the head and the tail swap places; none: nothing to dequeue). Phase B then finds
  // it there. Everything the loop reads is in locals: its stores to the planes could
  // otherwise alias them.
  Wavelet* const entries = p.entries.data();
  Wavelet* to_ramp[kMaxPacketSide];
  Wavelet* into[kMaxDirs];             // per output: receiver queues, by this row's router id
  uint64_t into_tail[kMaxDirs][kMaxWords];  // per output: the receivers' tails, by column
  for (unsigned s = scheduled; s; s &= s - 1) {
    const int o = std::countr_zero(s);
    const Dir od = p.dir(o);
    if (od == kRamp) {
      into[o] = nullptr;
      continue;
    }
    const int k = p.index(opposite(od));
    into[o] = entries + 2 * (static_cast<int64_t>(p.at(k, 0)) + f.link_delta_[od]);
    const uint64_t* const tail = p.tail(row_ + drow(od), k);
    for (size_t wi = 0; wi < words; ++wi) into_tail[o][wi] = shifted_word(tail, wi, words, dcol(od));
  }
  uint32_t* const forwarded = p.forwarded.data();
  uint32_t* const queued = p.queued.data();
  size_t want_offset[PacketRouteTable::kCases];
  for (int i = 0; i < PacketRouteTable::kCases; ++i) want_offset[i] = want_offset_[i];
  uint64_t sends = 0;
  for (int k = 0; k < n; ++k) {
    const size_t k_base = p.at(k, 0);
    for (size_t wi = 0; wi < words; ++wi) {
      const uint64_t head = p.head(row_, k)[wi];
      const uint64_t two = p.has_two(row_, k)[wi];
      uint64_t* const want = p.want(row_, 0, k) + wi;
      const uint32_t word_base = row_base_ + static_cast<uint32_t>(wi * 64);
      for (unsigned s = scheduled; s; s &= s - 1) {
        const int o = std::countr_zero(s);
        Wavelet* const to = into[o];
        const uint64_t to_tail = into_tail[o][wi];
        for (uint64_t m = picks[o][k][wi]; m; m &= m - 1) {
          const unsigned pos = static_cast<unsigned>(std::countr_zero(m));
          const uint32_t id = word_base + pos;
          const size_t sk = k_base + id;
          Wavelet* const queue = entries + 2 * sk;
          const unsigned h = (head >> pos) & 1u;
          if (to != nullptr) [[likely]] {
            copy_with_one_more_hop(to[2 * size_t{id} + ((to_tail >> pos) & 1u)], queue[h]);
          } else {
            to_ramp[id - row_base_] = &queue[h];  // stays there until phase B enqueues
          }
          ++forwarded[sk];
          --queued[id];
          // The next head's route, from the other entry if the queue held two, else from
          // this head again (the other entry may be a sender's to write), and not marked.
          const unsigned second = (two >> pos) & 1u;
          const int col = static_cast<int>(id - row_base_);
          const unsigned c = PacketRouteTable::case_of(row_, col, queue[h ^ second].dest);
          want[want_offset[c]] |= uint64_t{second} << pos;
          ++sends;
        }
      }
    }
  }
  bool links_used = false;
  for (unsigned s = scheduled; s; s &= s - 1) {
    const int o = std::countr_zero(s);
    if (into[o] == nullptr) continue;
    uint64_t* const bits = sent_bits + static_cast<size_t>(p.dir(o)) * words;
    for (size_t wi = 0; wi < words; ++wi) {
      bits[wi] = sent[o][wi];
      links_used |= sent[o][wi] != 0;
    }
  }
  // The queues the heads left: two entries become one, one becomes none.
  for (int k = 0; k < n; ++k) {
    uint64_t* const one = p.has_one(row_, k);
    uint64_t* const two = p.has_two(row_, k);
    uint64_t* const head = p.head(row_, k);
    for (size_t wi = 0; wi < words; ++wi) {
      uint64_t left = 0;
      for (unsigned s = scheduled; s; s &= s - 1) left |= picks[std::countr_zero(s)][k][wi];
      one[wi] &= ~left | two[wi];
      two[wi] &= ~left;
      head[wi] ^= left;
    }
  }

  // The host ports' cycles, in column order: a step where due (it sees the router's stall
  // toward the ramp of the previous cycle: the ramp queue's), then the off-ramp delivery
  // (a port's accept() touches only what its next step and the end of the cycle read).
  const bool delivers = (scheduled >> ramp) & 1u;
  uint64_t* const live = p.live(row_);
  uint64_t* const offered = sent_bits + static_cast<size_t>(kRamp) * words;
  uint64_t* const ramp_sent_count = &f.sent_count_[static_cast<size_t>(kRamp) * f.routers_.size()];
  for (size_t wi = 0; wi < words; ++wi) {
    const uint64_t deliver = delivers ? sent[ramp][wi] : 0;
    for (uint64_t m = due[wi] | deliver; m; m &= m - 1) {
      const unsigned pos = static_cast<unsigned>(std::countr_zero(m));
      const int col = static_cast<int>(wi * 64 + pos);
      const uint32_t id = row_base_ + static_cast<uint32_t>(col);
      PacketHost& ph = hosts[id];
      HostPort* const host = ph.host;
      if ((due[wi] >> pos) & 1u) {
        const ColorMask stall = ((ramp_stall[wi] >> pos) & 1u) ? ~ColorMask{0} : 0;
        Wavelet w;
        const RampStep step = ph.step(cycle_, stall, w);
        progress += step.progressed;
        if (step.offered) {
          ++moves;
          if (w.color >= colors || ((stall >> w.color) & 1u)) [[unlikely]] {
            fail_offer(counters_, t, id, kRamp, w.color, f.config_.colors);
            continue;
          }
          p.offers[id] = w;
          offered[wi] |= uint64_t{1} << pos;
        }
      }
      if ((deliver >> pos) & 1u) {
        ++ramp_sent_count[id];  // off-ramp sends are counted here (see Fabric::sent_count)
        counters_.record_delivery(*to_ramp[col], cycle_);
        host->accept(*to_ramp[col], cycle_);
      }
      const uint64_t next_wake = host->quiet_until(cycle_ + 1);
      wake[id] = next_wake;
      live[wi] = (live[wi] & ~(uint64_t{1} << pos)) | (uint64_t{next_wake != kNever} << pos);
    }
  }
  counters_.moves += moves + sends;
  counters_.progress += progress;
  counters_.queued_delta -= static_cast<int64_t>(sends);
  return links_used;
}

// Into the queue of input k [0317] of the routers set in `arrive`: a port takes one
// wavelet per cycle and its sender saw no stall [0333], so the queue has room. kCopy: the
// wavelet is from[id]; else its sender already wrote it at the tail. Returns how many
// entered.
template <bool kCopy>
[[gnu::always_inline]] inline uint64_t Fabric::PlaneRowPass::enqueue(int k, const uint64_t* arrive,
                                                                     const Wavelet* from) {
  PacketPlanes& p = p_;
  const size_t words = p.words();
  uint64_t* const one = p.has_one(row_, k);
  uint64_t* const two = p.has_two(row_, k);
  const uint64_t* const head = p.head(row_, k);
  Wavelet* const entries = p.entries.data();
  uint32_t* const queued = p.queued.data();
  const size_t k_base = p.at(k, 0);
  size_t want_offset[PacketRouteTable::kCases];
  for (int i = 0; i < PacketRouteTable::kCases; ++i) want_offset[i] = want_offset_[i];
  uint64_t count = 0;
  for (size_t wi = 0; wi < words; ++wi) {
    uint64_t m = arrive[wi];
    if (m & two[wi]) [[unlikely]] {
      const Dir in = p.dir(k);
      const uint32_t id = row_base_ + static_cast<uint32_t>(wi * 64) +
                          static_cast<uint32_t>(std::countr_zero(m & two[wi]));
      const Wavelet& w = kCopy ? from[id] : p.queue(k, id)[(head[wi] >> (id - row_base_) % 64) & 1u];
      fail_enqueue(counters_, EnqueueFault::overflow, f_.topology(), id, w, in, in, true, in);
      m &= ~two[wi];
    }
    // In locals: the stores to the planes could otherwise alias them.
    const uint64_t had_one = one[wi], heads = head[wi];
    uint64_t* const want = p.want(row_, 0, k) + wi;
    const uint32_t word_base = row_base_ + static_cast<uint32_t>(wi * 64);
    for (uint64_t b = m; b; b &= b - 1) {
      const unsigned pos = static_cast<unsigned>(std::countr_zero(b));
      const uint32_t id = word_base + pos;
      const uint64_t held = (had_one >> pos) & 1u;
      Wavelet& entry = entries[2 * (k_base + id) + (((heads >> pos) & 1u) ^ held)];
      if constexpr (kCopy) entry = from[id];
      ++queued[id];
      // A new head: its route [0318].
      const unsigned c =
          PacketRouteTable::case_of(row_, static_cast<int>(id - row_base_), entry.dest);
      want[want_offset[c]] |= (held ^ 1u) << pos;
    }
    two[wi] |= m & one[wi];
    one[wi] |= m;
    count += static_cast<uint64_t>(popcount64(m));
  }
  return count;
}

WAFERSIM_X86_64_V3_CLONE uint32_t Fabric::PlaneRowPass::receive_all(const uint64_t* active,
                                                                  uint64_t* next_active,
                                                                  uint32_t& next_count) {
  Fabric& f = f_;
  PacketPlanes& p = p_;
  const Topology& t = f.topology();
  const int n = p.count();
  const size_t words = p.words();
  uint64_t received[kMaxWords] = {};
  uint64_t enqueued = 0;

  // Link arrivals, one input direction at a time [0315]: the routers of the sending row
  // that sent toward this row, shifted by the link's column step.
  for (int k = 0; k < n; ++k) {
    const Dir in = p.dir(k);
    if (in == kRamp) continue;
    const Dir o = opposite(in);  // the direction the senders sent toward
    const int from_row = row_ - drow(o);
    if (from_row < 0 || from_row >= t.rows) continue;
    const uint64_t* const sent = f.link_sends_.sent(from_row, cycle_, o);
    if (sent == nullptr) continue;
    uint64_t arrive[kMaxWords];
    for (size_t wi = 0; wi < words; ++wi) {
      arrive[wi] = shifted_word(sent, wi, words, -dcol(o));
      received[wi] |= arrive[wi];
    }
    enqueued += enqueue<false>(k, arrive, nullptr);  // the senders wrote them
  }
  // The on-ramp offers of phase A of this cycle.
  uint64_t injected = 0;
  if (const uint64_t* const offered = f.link_sends_.sent(row_, cycle_, kRamp)) {
    injected = enqueue<true>(p.index(kRamp), offered, p.offers.data());
  }

  // Stall where a queue holds more than depth-1 = 1 wavelets after this cycle [0333].
  for (int k = 0; k < n; ++k) {
    for (size_t wi = 0; wi < words; ++wi) {
      const uint64_t one = p.has_one(row_, k)[wi], two = p.has_two(row_, k)[wi];
      p.stall(row_, k)[wi] = two;
      p.tail(row_, k)[wi] = p.head(row_, k)[wi] ^ (one & ~two);
    }
  }
  // Work next cycle: wavelets queued, or a host port that is not idle.
  uint32_t processed = 0;
  next_count = 0;
  const uint64_t* const live = p.live(row_);
  for (size_t wi = 0; wi < words; ++wi) {
    uint64_t next = live[wi];
    for (int k = 0; k < n; ++k) next |= p.has_one(row_, k)[wi];
    next_active[wi] = next;
    next_count += static_cast<uint32_t>(popcount64(next));
    processed += static_cast<uint32_t>(popcount64(active[wi] | received[wi]));
  }
  // Occupancy counters: every router of the row (those not processed hold nothing).
  uint32_t* const queued = p.queued.data() + row_base_;
  uint64_t* const sum = p.occupancy_sum.data() + row_base_;
  uint32_t* const most = p.occupancy_max.data() + row_base_;
  for (int col = 0; col < t.cols; ++col) {
    sum[col] += queued[col];
    most[col] = queued[col] > most[col] ? queued[col] : most[col];
  }
  counters_.injected += injected;
  counters_.queued_delta += static_cast<int64_t>(enqueued + injected);
  return processed;
}

bool Fabric::plane_phase_a_row(int row, uint64_t cycle, CycleCounters& counters) {
  return PlaneRowPass(*this, row, cycle, counters).send_all();
}

uint32_t Fabric::plane_phase_b_row(int row, const uint64_t* active, uint64_t* next_active,
                                   uint64_t cycle, CycleCounters& counters, uint32_t& next_count) {
  return PlaneRowPass(*this, row, cycle, counters).receive_all(active, next_active, next_count);
}

}  // namespace wafersim::fabric
