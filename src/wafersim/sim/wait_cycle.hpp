// The wait-cycle search of the deadlock report: when compute elements forward wavelets, a
// deadlock is usually a cycle of waits through router queues and PEs ("PE A waits to send
// color 1, which router A stalls because router B's queue is full, because PE B does not
// drain its input queue of color 1, because PE B waits to send color 2, ..."). The fabric
// itself cannot deadlock: its routes' channel-dependency graph is checked acyclic.
//
// Nodes are router queues that hold wavelets and endpoints that wait; an edge says what
// a node waits for:
//   queue -> neighbour's queue   its head waits for a direction whose receiver stalls it;
//   queue -> ramp endpoint       its head waits for the ramp, which stalls its color;
//   endpoint -> own router queue it waits to send a color the router stalls toward it;
//   endpoint -> queues, endpoints it waits to receive a color: the queues holding that color
//                                on the way, and the endpoints that send it (traced back
//                                through the color's Src directions).
#pragma once

#include <string>

#include "wafersim/fabric/fabric.hpp"

namespace wafersim::sim {

// The first wait cycle (nodes in router order), or, when there is none, what the waiting
// endpoints wait for; empty when no endpoint waits and no queue is stuck.
std::string wait_cycle_report(const fabric::Fabric& fabric);

}  // namespace wafersim::sim
