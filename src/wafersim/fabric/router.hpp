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
#include <cstddef>
#include <cstdint>
#include <limits>

#include "wafersim/fabric/direction.hpp"
#include "wafersim/fabric/ramp_endpoint.hpp"
#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::fabric {

inline constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

// Bit count without a library call: portable builds (no -mpopcnt) would otherwise call
// libgcc's __popcountdi2 on every queue lookup.
inline int popcount64(uint64_t x) {
#if defined(__POPCNT__)
  return std::popcount(x);
#else
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return static_cast<int>((x * 0x0101010101010101ull) >> 56);
#endif
}

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
  // Switched colors: the directions that are a Src in another position of the switch but
  // not in its arrival position. A sender there is held (sees the color stalled) until a
  // control wavelet moves the switch to a position that takes it (docs/fabric.md).
  DirMask hold = 0;
  // The color's runtime switch (route_switch.hpp), an index into the fabric's switches,
  // or ~0u: none. Consulted only when a control wavelet is queued or the head leaves.
  uint32_t switch_id = ~uint32_t{0};
  uint64_t forwarded = 0;  // wavelets sent to every Dest direction and dequeued
};
static_assert(sizeof(QueueSlot) == 24, "the switch index and hold fit in the slot's padding");

// A ring-buffer position one step on, without a branch (they mispredict on short queues).
[[gnu::always_inline]] inline uint8_t ring_next(unsigned pos, int capacity) {
  const int next = static_cast<int>(pos) + 1;
  return static_cast<uint8_t>(next & -static_cast<int>(next != capacity));
}

class HostPort;

// An endpoint on the ramp or on a border link (edge port), with the contract's registers.
struct PortAttachment {
  RampEndpoint* endpoint = nullptr;
  HostPort* host = nullptr;         // the same endpoint when it is the fabric's own host port:
                                    // the cycle loop calls it without a virtual call
  ColorMask stall_in = 0;           // the endpoint's stall bits, latched at the end of phase B
  uint64_t offer_cycle = kNever;    // `offer` is valid in phase B of this cycle
  Wavelet offer;
};

// Laid out by use, on cache-line boundaries: the first line is read and written by every
// active router's phases on every cycle, the second holds the ramp and what only color
// mode touches every cycle (packet mode reaches it only when its host port offers).
// Fields other routers read (stall bits, output registers, arrivals) and the per-direction
// send counts live in the Fabric's compact arrays instead, so neighbours do not pull in
// this struct.
struct alignas(64) Router {
  uint64_t keys = 0;       // configured colors (packet mode: input directions)
  uint64_t busy = 0;       // slots (by position, not key) whose queue holds a wavelet
  uint64_t over = 0;       // keys whose queue holds more than the stall threshold [0333]
  uint64_t occupancy_sum = 0;  // counter: sum over cycles of `queued`
  uint32_t slot_base = 0;  // first of this router's slots in the fabric's queue arena
  uint32_t queued = 0;     // wavelets in all queues
  uint32_t occupancy_max = 0;                   // counter: most wavelets queued at once
  DirMask out_valid = 0;   // output registers written in phase A of cycle `out_cycle`
                           // (color mode: packet mode delivers its off-ramp in phase A)
  DirMask links = 0;       // link ports that lead to another router (from the topology)
  uint8_t edge_ports = 0;  // axis directions (bits of Dir) with an edge attachment
  uint8_t slot_room = 0;   // slots reserved there (at least popcount(keys))
  std::array<uint8_t, kNumDirs> last_pick{};  // each output scheduler's round-robin pointer

  PortAttachment ramp;
  // Counter (docs/fabric.md): router traversals (energy). Packet mode derives them
  // instead (Fabric::router_traversals) and keeps here the wavelets queued at the reset.
  uint64_t enqueued = 0;
  uint64_t out_cycle = kNever;

  bool has(unsigned key) const { return (keys >> key) & 1u; }
  int slot_count() const { return popcount64(keys); }
  // Index of `key`'s slot in the arena.
  uint32_t slot_index(unsigned key) const {
    return slot_base + static_cast<uint32_t>(popcount64(keys & ((uint64_t{1} << key) - 1)));
  }
};

static_assert(offsetof(Router, ramp) == 64, "the hot fields of a router fill one cache line");
static_assert(sizeof(Router) == 128, "a router's per-cycle state fills two cache lines");

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
