// The deadlock report the watchdog attaches to DeadlockError [0306]: every router queue
// that holds wavelets, which directions its head still waits for and who stalls each one,
// the endpoints that hold work (a compute element: running task and pc, blocked and
// active ids, non-empty queues, what each operand waits on), and the first cycle of waits
// through queues and endpoints, if there is one (wait_cycle.hpp).
//
// The report is made of per-router parts: a domain of a split wafer renders the part of
// its own rows, reading other rows through a WaferView (wafer_view.hpp), and the parts of
// every domain merge in router order into the text one process gives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wafersim/fabric/fabric.hpp"
#include "wafersim/sim/wafer_view.hpp"
#include "wafersim/sim/wait_cycle.hpp"

namespace wafersim::sim {

// One line of the report, keyed by the router it describes.
struct ReportLine {
  uint32_t router = 0;
  bool limited = false;  // counts toward the entry limit (a stuck queue, a held sender)
  std::string text;
};

// The report's part of the routers a view owns.
struct DeadlockPart {
  // Stuck queues, then the PE and edge ports that hold work, router by router; of the
  // limited entries only the first kMaxEntries are rendered (the rest are counted): the
  // merged report shows the first kMaxEntries of the whole wafer.
  std::vector<ReportLine> entries;
  uint64_t entries_more = 0;
  std::vector<ReportLine> held_senders;  // senders that a switch position holds (limited)
  uint64_t held_senders_more = 0;
  WaitGraphPart waits;

  std::string encode() const;
  static DeadlockPart decode(std::string_view bytes);
};

DeadlockPart deadlock_part(const WaferView& view);

// The report from the parts of every domain (any order), as one process gives it.
std::string merge_deadlock_report(const fabric::Fabric& fabric, uint64_t cycle,
                                  const std::vector<DeadlockPart>& parts);

// One process: the whole wafer is the fabric.
std::string deadlock_report(const fabric::Fabric& fabric, uint64_t cycle);

}  // namespace wafersim::sim
