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
//
// A domain of a split wafer builds the nodes of its own rows with their edges and texts
// (reading other rows through a WaferView); the search then runs over every domain's
// nodes, merged in node order, so every domain finds the cycle one process finds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wafersim/fabric/fabric.hpp"
#include "wafersim/sim/byte_wire.hpp"

namespace wafersim::sim {

class WaferView;

struct WaitEdge {
  uint64_t to = 0;  // the node waited for
  std::string why;  // why the source waits for it
};

// A node (a router queue holding wavelets, or a waiting endpoint: router << 8 | key, key
// 0xFF for the ramp endpoint) with what it waits for.
struct WaitNode {
  uint64_t node = 0;
  std::vector<WaitEdge> edges;
  std::vector<std::string> held;       // microthreads held by a blocked id
  std::vector<std::string> dead_ends;  // what its receives wait for (when no cycle is found)
};

// The nodes of the routers a view owns, in node order. Of their dead-end lines only the
// first kMaxDeadEnds are rendered (the rest are counted): the report shows the first
// kMaxDeadEnds of the whole wafer.
struct WaitGraphPart {
  std::vector<WaitNode> nodes;
  uint64_t dead_ends_more = 0;

  void encode(ByteWriter& w) const;
  static WaitGraphPart decode(ByteReader& r);
};

WaitGraphPart wait_graph_part(const WaferView& view);  // empty in packet mode

// The first wait cycle (nodes in router order), or, when there is none, what the waiting
// endpoints wait for; empty when no endpoint waits and no queue is stuck.
std::string wait_cycle_report(const std::vector<const WaitGraphPart*>& parts);

}  // namespace wafersim::sim
