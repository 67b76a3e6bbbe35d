#include "wafersim/fabric/cycle_faults.hpp"

#include <exception>
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/fabric/fabric.hpp"

namespace wafersim::fabric {

void fail_enqueue(CycleCounters& counters, EnqueueFault f, const Topology& t, uint32_t id,
                  const Wavelet& w, Dir from, Dir other, bool packet, unsigned key) {
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

void fail_offer(CycleCounters& counters, const Topology& t, uint32_t id, Dir port,
                unsigned color, int colors) {
  const std::string where = std::string("the ") + (port == kRamp ? "on-ramp" : "edge port ") +
                            (port == kRamp ? "" : dir_name(port)) + " of router " +
                            router_name(t, id);
  if (color >= static_cast<unsigned>(colors)) {
    counters.fail(std::make_exception_ptr(RouteError(
        "a wavelet of color " + std::to_string(color) + " was offered on " + where +
        ", but only colors 0.." + std::to_string(colors - 1) + " enter the fabric")));
  } else {
    counters.fail(std::make_exception_ptr(WaferError(
        "internal error (please report): an endpoint offered color " + std::to_string(color) +
            " on " + where + " while the router stalls it",
        ErrorCategory::internal)));
  }
}

void fail_missing_endpoint(CycleCounters& counters) {
  counters.fail(std::make_exception_ptr(WaferError(
      "internal error (please report): delivery to a missing endpoint", ErrorCategory::internal)));
}

void fail_switched_arrival(CycleCounters& counters, const Topology& t, uint32_t id,
                           const Wavelet& w, Dir from, const RouteSwitch& sw) {
  const std::string head = "a wavelet of color " + std::to_string(w.color) + " arrived at router " +
                           router_name(t, id) + " from " + dir_name(from) + ", which ";
  if (!(sw.src_any & bit(from))) {
    counters.fail(std::make_exception_ptr(RouteError(
        head + "is not a source (Src) of that color there in any position of its switch")));
    return;
  }
  // Senders are held from a direction the position does not take; only a wavelet already
  // on a 2-cycle link when the switch moved away gets here.
  counters.fail(std::make_exception_ptr(RouteError(
      head + "its switch's position " + std::to_string(sw.pos_in) + " does not take (" +
      dir_name(from) + " is a source in position(s) " + position_list(sw.positions_taking(from)) +
      "): it left on a 2-cycle link before the switch moved away from that direction, and a "
      "sender sees a switch move one cycle late (docs/fabric.md, \"Switches\")")));
}

void fail_switch_command(CycleCounters& counters, const Topology& t, uint32_t id,
                         const Wavelet& w) {
  counters.fail(std::make_exception_ptr(RouteError(
      "a control wavelet of color " + std::to_string(w.color) + " carried the reserved switch "
      "command 3 to the switch at router " + router_name(t, id) + " (hop " +
      std::to_string(w.hops) + ", data bits " + std::to_string(17 + 2 * w.hops) + ":" +
      std::to_string(16 + 2 * w.hops) + "); commands are 0 no-op, 1 advance, 2 reset")));
}

}  // namespace wafersim::fabric
