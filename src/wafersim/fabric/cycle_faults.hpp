// Errors the cycle loop meets mid-phase. A phase cannot throw across its OpenMP region, so
// each is recorded in the row's CycleCounters and rethrown by the simulator after the phase.
// Built off the hot path: the loop only branches to them.
#pragma once

#include <cstdint>

#include "wafersim/fabric/cycle_counters.hpp"
#include "wafersim/fabric/direction.hpp"
#include "wafersim/fabric/route_switch.hpp"
#include "wafersim/fabric/topology.hpp"
#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::fabric {

// Why a wavelet could not be enqueued.
enum class EnqueueFault : uint8_t { no_route, not_a_source, two_sources, overflow };

// `key` is the queue's key: a color, or in packet mode an input direction; `other` is the
// first source of the color this cycle (two_sources only).
[[gnu::cold, gnu::noinline]] void fail_enqueue(CycleCounters& counters, EnqueueFault fault,
                                               const Topology& t, uint32_t id, const Wavelet& w,
                                               Dir from, Dir other, bool packet, unsigned key);

// An endpoint offered a color outside the fabric's colors, or one the router stalls.
[[gnu::cold, gnu::noinline]] void fail_offer(CycleCounters& counters, const Topology& t,
                                             uint32_t id, Dir port, unsigned color, int colors);

[[gnu::cold, gnu::noinline]] void fail_missing_endpoint(CycleCounters& counters);

// A wavelet of a switched color arrived from a direction its switch's arrival position
// does not take (and no other wavelet of the color arrived this cycle).
[[gnu::cold, gnu::noinline]] void fail_switched_arrival(CycleCounters& counters,
                                                        const Topology& t, uint32_t id,
                                                        const Wavelet& w, Dir from,
                                                        const RouteSwitch& sw);

// A control wavelet carried the reserved switch command to a router with a switch.
[[gnu::cold, gnu::noinline]] void fail_switch_command(CycleCounters& counters, const Topology& t,
                                                      uint32_t id, const Wavelet& w);

}  // namespace wafersim::fabric
