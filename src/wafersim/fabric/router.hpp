// The state of one router (seed 000 FIG. 6, Router 600 [0313]-[0322]): per-color data
// queues, the static Dest / Src direction vectors, the Sent vector, captured stall inputs,
// one scheduler per output direction, and the output registers of the cycle contract.
//
// Queues are allocated only for the colors a router carries (a "slot" per configured color,
// found by rank in the `keys` bit set), so a large fabric with few routes stays small. In
// packet mode (NoC studies) a slot is an input port instead of a color.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "wafersim/fabric/direction.hpp"
#include "wafersim/fabric/ramp_endpoint.hpp"
#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::fabric {

inline constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

enum class SchedulerPolicy : uint8_t {
  round_robin,  // cycle through the ready colors before picking one again [0320]
  priority,     // colors below the split first, round-robin within each level [0320]
};

// One color's queue and routing state at one router.
struct QueueSlot {
  DirMask dest = 0;   // Dest 661: the directions this color goes to [0318]
  DirMask src = 0;    // Src 670: the directions this color comes from; they get its stall [0322]
  DirMask sent = 0;   // Sent 662: Dest directions the head wavelet already went to [0319]
  uint8_t key = 0;    // the color (packet mode: the input direction)
  uint8_t head = 0;   // ring-buffer position of the oldest wavelet
  uint8_t count = 0;  // wavelets queued
  uint64_t forwarded = 0;  // wavelets sent to every Dest direction and dequeued
};

// An endpoint on the ramp or on a border link (edge port), with the contract's registers.
struct PortAttachment {
  RampEndpoint* endpoint = nullptr;
  ColorMask stall_in = 0;           // the endpoint's stall bits, latched at the end of phase B
  uint64_t offer_cycle = kNever;    // `offer` is valid in phase B of this cycle
  Wavelet offer;
};

struct Router {
  uint64_t keys = 0;       // configured colors (packet mode: input directions)
  uint64_t nonempty = 0;   // keys whose queue holds a wavelet
  uint64_t stall_out = 0;  // per-key stall toward every Src direction [0333], end of last cycle
  std::vector<QueueSlot> slots;   // one per key, in key order
  std::vector<Wavelet> entries;   // slots.size() * capacity, slot i at i * capacity
  PortAttachment ramp;

  // Output registers, two sets indexed by cycle parity so a 2-cycle diagonal link keeps the
  // wavelet of the previous cycle while the next one is written.
  std::array<std::array<Wavelet, kNumDirs>, 2> out{};
  std::array<uint64_t, 2> out_cycle{kNever, kNever};
  std::array<DirMask, 2> out_valid{};
  std::array<uint8_t, kNumDirs> last_pick{};  // each output scheduler's round-robin pointer
  uint8_t edge_ports = 0;    // axis directions (bits of Dir) with an edge attachment

  // Phase-B bookkeeping written by the simulator for this router's row only.
  DirMask arrivals = 0;
  uint64_t b_cycle = kNever;

  uint32_t queued = 0;  // wavelets in all queues

  // Counters (docs/fabric.md).
  std::array<uint64_t, kNumDirs> sent_count{};  // wavelets sent per output direction
  uint64_t enqueued = 0;                         // router traversals (energy)
  uint64_t occupancy_sum = 0;                    // sum over cycles of `queued`
  uint32_t occupancy_max = 0;

  bool has(unsigned key) const { return (keys >> key) & 1u; }
  int rank(unsigned key) const {
    return std::popcount(keys & ((uint64_t{1} << key) - 1));
  }
  QueueSlot& slot(unsigned key) { return slots[rank(key)]; }
  const QueueSlot& slot(unsigned key) const { return slots[rank(key)]; }

  // Adds an empty slot for `key` (no-op when present); `capacity` entries per slot.
  QueueSlot& ensure_slot(unsigned key, int capacity);
  // Removes the slot of `key`; its queue must be empty.
  void remove_slot(unsigned key, int capacity);
};

// The next candidate after `last` in a cyclic order of keys (the round-robin of [0320]).
inline unsigned pick_round_robin(uint64_t candidates, unsigned last) {
  const uint64_t after = last >= 63 ? 0 : candidates & (~uint64_t{0} << (last + 1));
  return static_cast<unsigned>(std::countr_zero(after ? after : candidates));
}

inline unsigned pick_color(uint64_t candidates, unsigned last, SchedulerPolicy policy,
                           uint64_t high_priority) {
  if (policy == SchedulerPolicy::priority) {
    const uint64_t high = candidates & high_priority;
    if (high) candidates = high;
  }
  return pick_round_robin(candidates, last);
}

}  // namespace wafersim::fabric
