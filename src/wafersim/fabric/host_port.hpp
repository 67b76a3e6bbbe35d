// The host's end of a ramp or of a border link (an edge port): the stand-in for the I/O
// FPGAs that turn host frames into wavelets and back (seed 000 [0257], [0285], [0095]).
//
// Injection: one FIFO per color, ordered by release cycle; each cycle the port offers at
// most one released wavelet, of a color the router does not stall, choosing among colors
// round-robin. Collection: every arriving wavelet is recorded with its arrival cycle.
// With a per-color capacity the port also models a slow sink: it holds at most `capacity`
// wavelets of a color, stalls the router on that color while full [0330], and releases one
// wavelet per color every `drain_period` cycles (0: only when the host collects).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "wafersim/fabric/direction.hpp"
#include "wafersim/fabric/latency_counts.hpp"
#include "wafersim/fabric/ramp_endpoint.hpp"

namespace wafersim::fabric {

struct Arrival {
  Wavelet wavelet;
  uint64_t cycle = 0;  // phase B of this cycle handed it to the port
};

// Aligned so that the fields the cycle loop reads on every cycle share one cache line.
class alignas(64) HostPort final : public RampEndpoint {
 public:
  HostPort(uint32_t router, Dir port) : port_(port), router_(router) {}

  uint32_t router() const { return router_; }
  Dir port() const { return port_; }

  // Queues `w` for injection at `release`. Latency counts from the release, so waiting at
  // the source is part of it: the wavelet is stamped when it enters (entry_stamp).
  void push(Wavelet w, uint64_t release);
  // capacity 0: unlimited sink.
  void set_sink(uint32_t capacity, uint32_t drain_period);
  uint32_t capacity() const { return capacity_; }

  // Everything that arrived since the last take(), in arrival order; empties the sink.
  std::vector<Arrival> take();
  size_t arrived_count() const { return arrived_.size(); }
  // Wavelets still waiting to enter the fabric.
  size_t pending() const { return pending_; }
  // Adds the cycles each wavelet that entered the fabric since the last call waited here,
  // from its release (exact, 64 bits), to `into`, and starts counting anew.
  void take_waits(LatencyCounts& into) {
    into.merge(waits_);
    waits_.clear();
  }
  // Colors with a wavelet waiting to enter.
  ColorMask pending_colors() const;

  // Defined below, in the header: the fabric calls a host port directly (it is final), so
  // the common cycle of a port that has nothing released yet costs a few instructions.
  RampStep step(uint64_t cycle, ColorMask router_stall, Wavelet& offer) override;
  void accept(const Wavelet& w, uint64_t cycle) override;
  // Nothing to do at the end of a cycle; the packet-mode cycle loop relies on it and does
  // not call it.
  void finish_cycle(uint64_t /*cycle*/) final {}
  ColorMask stall_to_router() const override { return full_; }
  bool idle() const override { return pending_ == 0 && (drain_period_ == 0 || held_any_ == 0); }
  // For the packet-mode cycle loop, which skips step() on cycles where it could only wait
  // for a release: the first cycle from `cycle` on at which step() may offer or change
  // anything; kNever exactly when idle() holds (not before the host pushes more). Before a
  // finite one, wavelets are pending and step() reports progress. Holds until step(),
  // accept() or push().
  uint64_t quiet_until(uint64_t cycle) const {
    if (drain_period_ > 0 && held_any_ != 0) return cycle;  // a sink drains
    if (pending_ == 0) return kNoRelease;
    return ready_ != 0 || next_release_ == kNoRelease ? cycle : next_release_;
  }
  std::string describe() const override;
  ColorMask offering() const override { return pending_colors(); }

  // Where, beyond this object's first two cache lines, the next step() most likely reads:
  // the FIFO of the earliest pending wavelet and that wavelet (nullptr: none pending). For
  // callers that fetch them ahead of time; it changes only when a push() or an offer
  // moves a FIFO, and a stale answer only costs a wasted fetch.
  struct NextReads {
    const void* fifo = nullptr;
    const void* wavelet = nullptr;
  };
  NextReads next_reads() const {
    NextReads next;
    uint64_t earliest = kNoRelease;
    for (const ColorFifo& f : fifos_) {
      if (!f.empty() && (next.fifo == nullptr || f.front().release < earliest)) {
        earliest = f.front().release;
        next = {&f, &f.front()};
      }
    }
    return next;
  }

 private:
  struct Pending {
    uint64_t release;
    Wavelet wavelet;
  };
  // One color's wavelets in release order: a vector with a moving front (one indirection
  // to the head, where a deque needs two). Its memory follows the wavelets still waiting,
  // not all that ever passed: a host that pushes more before the FIFO runs dry (a long run
  // fed in slices) would otherwise keep every wavelet it ever sent. The left part is cut
  // off once it is as long as what remains (each wavelet is moved at most once on
  // average), and a large buffer is given back when the FIFO empties.
  struct ColorFifo {
    static constexpr size_t kKeep = 1024;  // items kept allocated across an empty FIFO
    uint8_t color = 0;
    size_t head = 0;  // items before it have left
    std::vector<Pending> items;

    bool empty() const { return head == items.size(); }
    const Pending& front() const { return items[head]; }
    void pop_front() {
      if (++head == items.size()) {
        head = 0;
        if (items.capacity() > kKeep) std::vector<Pending>().swap(items);
        else items.clear();
      } else if (head >= kKeep && 2 * head >= items.size()) {
        items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(head));
        head = 0;
      }
    }
  };
  ColorFifo& fifo_for(uint8_t color);
  void update_full(uint8_t color);
  void rescan(uint64_t cycle);
  void drain();
  void offer_next(uint64_t cycle, ColorMask candidates, Wavelet& offer);

  // Read every cycle: kept together in the first cache line (with the vtable pointer).
  size_t pending_ = 0;
  ColorMask ready_ = 0;                 // colors whose head is released
  uint64_t next_release_ = kNoRelease;  // earliest release of a head not yet released
  ColorMask full_ = 0;
  ColorMask held_any_ = 0;
  uint32_t capacity_ = 0;
  uint32_t drain_period_ = 0;
  uint8_t last_color_ = 63;             // round-robin pointer over colors
  Dir port_;
  uint32_t router_;
  static constexpr uint64_t kNoRelease = ~uint64_t{0};

  std::vector<ColorFifo> fifos_;  // sorted by color
  LatencyCounts waits_;
  std::vector<Arrival> arrived_;
  // Per color, wavelets the sink still holds; allocated by set_sink (empty: none held).
  std::vector<uint32_t> held_;
};

inline RampStep HostPort::step(uint64_t cycle, ColorMask router_stall, Wavelet& offer) {
  RampStep result;
  if (drain_period_ > 0 && held_any_ != 0 && cycle % drain_period_ == 0) {
    drain();
    result.progressed = true;
  }
  if (pending_ == 0) return result;
  if (cycle >= next_release_) rescan(cycle);
  // Heads waiting for their release cycle: time passing toward them is progress.
  if (next_release_ != kNoRelease) result.progressed = true;
  const ColorMask candidates = ready_ & ~router_stall;
  if (candidates == 0) return result;
  offer_next(cycle, candidates, offer);
  result.offered = true;
  result.progressed = true;
  return result;
}

}  // namespace wafersim::fabric
