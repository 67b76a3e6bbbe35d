// What sits at the other end of a router's on/off ramp (seed 000 [0307], [0314]): today a
// host port, later the compute element. The fabric calls it once per cycle in each of the
// two phases of the cycle contract (docs/fabric.md), and never needs to know what it is.
//
// Phase A (send), in this order for one PE:
//   1. the router's schedulers pick what to send from last cycle's stall bits;
//   2. step(): the endpoint executes its cycle and may offer at most one wavelet for the
//      on-ramp, of a color whose bit in `router_stall` (the router's per-color stall toward
//      the ramp, computed at the end of the previous cycle [0334]) is clear.
// Phase B (receive):
//   3. the router enqueues arrivals (including the offered wavelet), dequeues completed
//      multicasts and recomputes its stall bits;
//   4. accept(): the wavelet the router put on the off-ramp this cycle, if any;
//   5. finish_cycle(): every cycle the PE is active, after accept(): the endpoint ends its
//      cycle (a compute element latches its stall bits here);
//   6. stall_to_router(): read once, after finish_cycle(); the router uses it next cycle
//      [0330].
// An endpoint is stepped in every cycle its router is active, and its router stays active
// while the endpoint is not idle(); a PE whose router and endpoint are both idle costs
// nothing per cycle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::fabric {

struct RampStep {
  bool offered = false;     // `offer` holds one wavelet for the on-ramp
  bool progressed = false;  // did useful work this cycle (the watchdog counts it as progress)
};

// One thing an endpoint is waiting for, for the deadlock report's wait-cycle search: to send
// a wavelet of `color` (the router stalls it), to receive one (nothing of `color` comes), or
// to receive one of a local color, which no router carries: only the endpoint itself can
// fill that queue.
struct EndpointWait {
  // held: a microthread that may not resume while id `color` is blocked [0390].
  enum class Kind : uint8_t { send, receive, receive_local, held };
  Kind kind = Kind::receive;
  uint8_t color = 0;  // the color waited on (held: the blocked id)
  std::string who;  // what waits, e.g. "task 3 pc 12 (mov16) dst"
};

class RampEndpoint {
 public:
  virtual ~RampEndpoint() = default;

  // Phase A. `router_stall` bit c set: the router cannot take color c this cycle.
  // The offered wavelet's injected_cycle is the cycle latency is measured from.
  virtual RampStep step(uint64_t cycle, ColorMask router_stall, Wavelet& offer) = 0;

  // Phase B: the router delivers a wavelet on the off-ramp. Only sent for colors whose
  // stall_to_router() bit was clear at the end of the previous cycle, so it must fit.
  virtual void accept(const Wavelet& w, uint64_t cycle) = 0;

  // Phase B, after accept() (or without one): the end of the endpoint's cycle.
  virtual void finish_cycle(uint64_t /*cycle*/) {}

  // Phase B, after finish_cycle(): per-color stall toward the router (bit c: do not send c).
  virtual ColorMask stall_to_router() const = 0;

  // True when the endpoint has nothing to do until a wavelet arrives.
  virtual bool idle() const = 0;

  // Sleeping (docs/fabric.md, "Sleeping endpoints"). Asked in phase B, after
  // finish_cycle(), of an endpoint that is not idle(): for how many of the next cycles
  // would step() and finish_cycle() only count, offering nothing and keeping the same
  // stall bits, as long as nothing is delivered to it? kUntilDelivery: until a wavelet is;
  // 0: it must be stepped. The cycles of a timed sleep are work (the watchdog sees
  // progress in each), those of an untimed one are waiting (it sees none). While the
  // endpoint sleeps the fabric neither steps nor finishes it, and calls catch_up(first, n)
  // to count cycles first..first+n-1 at once before it delivers to it, before it steps it
  // again, and at the end of a run (the host sees every count up to date).
  static constexpr uint64_t kUntilDelivery = ~uint64_t{0};
  virtual uint64_t sleep_span() const { return 0; }
  virtual void catch_up(uint64_t /*first*/, uint64_t /*n*/) {}

  // A short description for deadlock reports: what the endpoint holds and waits on.
  virtual std::string describe() const = 0;

  // For deadlock reports: what it waits to send or receive (default: nothing). Only called
  // when the watchdog fires, never in the cycle loop.
  virtual void waits(std::vector<EndpointWait>& /*out*/) const {}

  // For deadlock reports: the colors it has a wavelet of waiting to enter the router
  // (default: none known). Never called in the cycle loop.
  virtual ColorMask offering() const { return 0; }
};

}  // namespace wafersim::fabric
