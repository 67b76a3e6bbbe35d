// Runtime switch positions of one color at one router, moved by control wavelets
// (docs/fabric.md, "Switches"). Seed 000 routes every color statically ([0318], [0322];
// digest 000 section 3.9 lists runtime switch positions as not described), so the
// positions, the commands and their encoding are ours.
//
// Position 0 is the color's route (set_route / route). Positions 1..last each replace one
// field, Src (rx) or Dest (tx), and keep the other from the position before, so masks
// accumulate. A control wavelet of the color carries one 2-bit command per router it
// passes: the router h hops from the sender (hop 0: the sender's own router) reads the
// command at data bits 17+2h:16+2h. Advance moves to the next position (from the last
// one back to 0 in ring mode, else it stays), reset goes to position 0.
//
// Hold: a wavelet of the color whose direction is a Src in another position but not in
// the arrival position is not taken in; its sender sees the color stalled (QueueSlot::hold)
// until the switch moves to a position that takes it. A direction that no position takes
// is not held: a wavelet from it raises RouteError, as on a color without a switch.
//
// Timing: the wavelet is forwarded with the position in force when it arrives, and the
// switch moves afterwards. A router keeps two positions: `pos_in` checks where arrivals
// come from and moves when a control wavelet is queued; `pos_out` gives the Dest and moves
// when a control wavelet leaves. Both follow the same commands in the same order, so every
// wavelet of the color is taken in and sent on with the position its predecessors left.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "wafersim/fabric/direction.hpp"
#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::fabric {

inline constexpr int kMaxSwitchPositions = 4;  // beside position 0
inline constexpr int kCommandHops = 7;         // commands a control wavelet carries
inline constexpr uint32_t kNoSwitch = ~uint32_t{0};

// The 2-bit commands (data bits 17+2h:16+2h).
enum SwitchCommand : unsigned { kSwitchNop = 0, kSwitchAdvance = 1, kSwitchReset = 2,
                                kSwitchReserved = 3 };
// Data bit 31 of a control wavelet on a switched color: only the routers act on it; it is
// not handed to any endpoint (CE or host port).
inline constexpr uint32_t kSwitchOnlyBit = uint32_t{1} << 31;

// The command of the router `w.hops` hops from the sender.
inline unsigned switch_command(const Wavelet& w) {
  return w.hops < kCommandHops ? (w.data >> (16 + 2 * w.hops)) & 3u : kSwitchNop;
}

struct SwitchPosition {
  bool rx = false;    // replaces the Src mask (else the Dest mask)
  DirMask mask = 0;
};

struct RouteSwitch {
  uint32_t router = kNoSwitch;  // kNoSwitch: the entry is unused (its switch was removed)
  uint8_t color = 0;
  uint8_t last = 0;     // the last position, 1..kMaxSwitchPositions
  uint8_t start = 0;    // the position it was configured in
  bool ring = false;
  uint8_t pos_in = 0;   // position for arrivals (Src)
  uint8_t pos_out = 0;  // position for forwarding (Dest); the one users read
  std::array<SwitchPosition, kMaxSwitchPositions> positions{};
  // Masks of each position, accumulated from position 0 (the route).
  std::array<DirMask, kMaxSwitchPositions + 1> dest{}, src{};
  DirMask src_any = 0;  // Src of some position
  // Directions held in position `pos`: a Src of another position, not of this one.
  DirMask held(uint8_t pos) const { return static_cast<DirMask>(src_any & ~src[pos]); }
  // Counter: wavelets forwarded (sent to every Dest direction) in each position.
  std::array<uint64_t, kMaxSwitchPositions + 1> forwarded{};

  // Recomputes the masks of every position from the route (position 0).
  void rebuild(DirMask route_dest, DirMask route_src);
  // The position after `command` (nop and reserved leave it).
  uint8_t next(uint8_t pos, unsigned command) const {
    if (command == kSwitchReset) return 0;
    if (command != kSwitchAdvance) return pos;
    if (pos < last) return static_cast<uint8_t>(pos + 1);
    return ring ? 0 : last;
  }
  // The positions (bit p: position p) whose Src takes direction `d`.
  unsigned positions_taking(Dir d) const {
    unsigned m = 0;
    for (int p = 0; p <= last; ++p) {
      if (src[static_cast<size_t>(p)] & bit(d)) m |= 1u << p;
    }
    return m;
  }
  DirMask dest_union() const;
  DirMask src_union() const;
};

// "0, 2": the positions in a bit set of positions (RouteSwitch::positions_taking).
std::string position_list(unsigned positions);

}  // namespace wafersim::fabric
