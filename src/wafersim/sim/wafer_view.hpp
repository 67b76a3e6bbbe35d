// What the deadlock report (watchdog.hpp, wait_cycle.hpp) reads of routers anywhere on the
// wafer. One process reads its fabric. A wafer split into domains of rows (domain.hpp) is
// different: a domain steps only its own rows, so its copy of another domain's rows holds
// their routes, switches and host ports as configured but not their queues, waiting PEs or
// host ports' progress. At a deadlock the domains swap those few facts about their rows
// (DeadlockFacts: non-empty queues, PEs that wait, edge ports with work left); each one
// then renders the report's part of its own rows reading everything else through this view
// (the stall bits of the rows next to a cut are already swapped every cycle), and the parts
// merge into the report one process gives (docs/scale.md, "What each rank reports on a
// deadlock").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "wafersim/fabric/fabric.hpp"

namespace wafersim::sim {

// A router queue holding wavelets.
struct QueueFact {
  uint32_t router = 0;
  uint8_t key = 0;              // the color (packet mode: the input direction)
  uint8_t count = 0;            // wavelets queued
  fabric::DirMask pending = 0;  // Dest directions its head still goes to (Dest & ~Sent)
};

// What one domain tells the others about its rows.
struct DeadlockFacts {
  std::vector<QueueFact> queues;      // its non-empty queues, in router and key order
  std::vector<uint32_t> waiting_pes;  // routers whose ramp endpoint waits on something
  std::vector<uint64_t> busy_ports;   // edge ports with work left: router << 8 | direction

  std::string encode() const;
  static DeadlockFacts decode(std::string_view bytes);
};

// The facts of the routers in `owned_rows` (a flag per row; empty: every row).
DeadlockFacts deadlock_facts(const fabric::Fabric& f, const std::vector<uint8_t>& owned_rows);

// The flag per row of the rows in `blocks` ([lo, hi) ranges; none: empty, every row).
std::vector<uint8_t> rows_of(const fabric::Fabric& f,
                             const std::vector<std::pair<int, int>>& blocks);

class WaferView {
 public:
  // One process: the fabric is the whole wafer.
  explicit WaferView(const fabric::Fabric& f);
  // A domain holding `owned_rows` (a flag per row), with every domain's facts.
  WaferView(const fabric::Fabric& f, std::vector<uint8_t> owned_rows,
            const std::vector<DeadlockFacts>& every);

  const fabric::Fabric& fabric() const { return f_; }
  // Whether this domain steps router `id` (renders its part of the report).
  bool owns(uint32_t id) const {
    return owned_.empty() || owned_[id / static_cast<uint32_t>(f_.cols())];
  }
  // Wavelets queued at `key` of router `id` (0: none, or no such queue there).
  unsigned count(uint32_t id, unsigned key) const;
  // Dest directions the head of that queue still goes to (0 when it is empty).
  fabric::DirMask pending(uint32_t id, unsigned key) const;
  // Whether the ramp endpoint of router `id` waits on something (a wait-graph node).
  bool pe_waits(uint32_t id) const { return waiting_.count(id) != 0; }
  // Whether the endpoint on edge port `d` of router `id` has work left.
  bool port_busy(uint32_t id, fabric::Dir d) const {
    return busy_ports_.count((uint64_t{id} << 8) | d) != 0;
  }

 private:
  void add(const DeadlockFacts& facts);

  const fabric::Fabric& f_;
  std::vector<uint8_t> owned_;  // a flag per row (empty: every row)
  std::unordered_map<uint64_t, QueueFact> queues_;  // by router << 8 | key
  std::unordered_set<uint32_t> waiting_;
  std::unordered_set<uint64_t> busy_ports_;
};

}  // namespace wafersim::sim
