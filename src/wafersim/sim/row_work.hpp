// The work of each row's phases, cycle by cycle, recorded on request
// (Simulator::set_record_row_work): how the threads' work is spread over the rows, which
// bounds what sharing whole rows between threads can gain (docs/scale.md, "What whole
// rows allow"). Off by default: a run then reads no clock per row.
#pragma once

#include <cstdint>

namespace wafersim::sim {

struct RowWork {
  uint64_t cycle = 0;
  uint64_t ns = 0;       // wall time of the phase, in the thread that ran it
  uint32_t row = 0;
  uint32_t routers = 0;  // phase A: the row's active routers; phase B: routers processed
  uint8_t phase = 0;     // 0: phase A, 1: phase B
};

}  // namespace wafersim::sim
