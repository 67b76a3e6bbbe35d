// What the routers of one row did in a phase. Each row owns one, so rows can run in
// parallel; the simulator sums them in row order after each phase.
#pragma once

#include <cstdint>
#include <exception>
#include <vector>

#include "wafersim/fabric/latency_counts.hpp"
#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::fabric {

struct CycleCounters {
  // Reset every cycle.
  uint64_t moves = 0;            // wavelets that left a queue or an endpoint on any port
  uint64_t progress = 0;         // endpoint steps that did work
  uint64_t slow_links_used = 0;  // wavelets put on 2-cycle links (still in flight)
  int64_t queued_delta = 0;      // enqueues minus dequeues
  // Sleeping ramp endpoints (Fabric::asleep_from): routers whose endpoint fell asleep in
  // phase B, the change in how many sleep (timed, untimed), and the routers phase B
  // processed while their endpoint slept.
  std::vector<uint32_t> fell_asleep;
  int64_t timed_asleep_delta = 0;
  int64_t untimed_asleep_delta = 0;
  uint64_t asleep_processed = 0;

  // Accumulated over a run.
  uint64_t injected = 0;   // wavelets that entered a router from a ramp or an edge port
  uint64_t delivered = 0;  // wavelets handed to a ramp or edge endpoint
  uint64_t slept_cycles = 0;  // endpoint cycles counted when a delivery or its timer woke them
  LatencyCounts latency;          // delivered wavelets by cycles since their stamp
  std::vector<uint64_t> hop_hist;  // delivered wavelets by router-to-router hops

  // The first error this row met; the simulator rethrows it after the phase.
  std::exception_ptr error;

  void start_cycle() {
    moves = progress = slow_links_used = 0;
    queued_delta = 0;
    fell_asleep.clear();
    timed_asleep_delta = untimed_asleep_delta = 0;
    asleep_processed = 0;
  }
  void fail(std::exception_ptr e) {
    if (!error) error = std::move(e);
  }
  void record_delivery(const Wavelet& w, uint64_t cycle) {
    ++delivered;
    latency.add(latency_since(w.injected_cycle, cycle));
    if (w.hops >= hop_hist.size()) hop_hist.resize(w.hops + 1u, 0);
    ++hop_hist[w.hops];
  }
};

}  // namespace wafersim::fabric
