// A wafer split into domains of rows, one per process (docs/scale.md): each process holds
// the whole wafer but steps only the rows of its domain (one or more blocks of rows);
// every cycle it swaps the state of the links crossing its cuts with the neighbouring
// domains, and all domains agree on what the cycle loop decides from the whole wafer
// (whether work is left, whether anything moved, the first error). The exchange itself
// (MPI, or threads in a test) lives outside the core, behind this interface.
#pragma once

#include <cstdint>

#include "wafersim/fabric/router.hpp"

namespace wafersim::sim {

// What the cycle loop decides from the whole wafer; each domain gives its own part and
// gets back the combination over all domains.
struct DomainFlags {
  uint64_t work = 0;      // active routers, sleepers, wavelets on 2-cycle links (sum)
  uint64_t progress = 0;  // moves, endpoint progress, timed sleepers this cycle (sum)
  int64_t queued = 0;     // wavelets in router queues (sum)
  // The first failing step in the one-thread order (phase A of row r: 2r, phase B of row
  // q: 2q + 3; fabric::kNever: none) and the domain that owns it (the smallest step).
  uint64_t error_step = fabric::kNever;
  int error_domain = -1;
};

class CutExchange {
 public:
  virtual ~CutExchange() = default;
  // After phase A of `cycle` in the domain's border rows: hand what they sent across the
  // cuts to the neighbours (CutMessages::write_sends) and start taking theirs;
  // the domain's inner rows step meanwhile.
  virtual void send_cuts(uint64_t cycle) = 0;
  // Before phase B of the border rows: finish taking what the neighbours' border rows
  // sent across the cuts in `cycle` (fabric::Fabric::import_cut_sends).
  virtual void receive_cuts(uint64_t cycle) = 0;
  // After phase B (and once when a run starts): swap the cut rows' stall bits and the
  // holds of their runtime switches with the neighbours (CutMessages::write_borders /
  // read_borders) and combine `local` over all domains.
  virtual DomainFlags after_phase_b(uint64_t cycle, const DomainFlags& local) = 0;
};

}  // namespace wafersim::sim
