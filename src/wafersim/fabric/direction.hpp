// The ports of a router. Seed 000 names seven directions [0314]: skipX+, skipX-, X+, X-,
// Y+, Y- and the on/off ramp; seed 003 adds the four diagonals [0033]. Coordinates are
// (row, col) = (y, x): north is +row (Y+ is North [0314], y grows north [0039]) and east
// is +col, so both seeds' examples read the same here.
#pragma once

#include <bit>
#include <cstdint>

namespace wafersim::fabric {

// Opposite directions differ in the lowest bit, so opposite(d) = d ^ 1 (ramp excepted).
enum Dir : uint8_t {
  kE = 0,
  kW = 1,
  kN = 2,
  kS = 3,
  kNE = 4,
  kSW = 5,
  kNW = 6,
  kSE = 7,
  kSkipE = 8,
  kSkipW = 9,
  kRamp = 10,
};
inline constexpr int kNumDirs = 11;

// A set of directions, one bit per Dir (the Dest / Src / Sent vectors of [0318]-[0322]).
using DirMask = uint16_t;
inline constexpr DirMask kAllDirs = (1u << kNumDirs) - 1;

constexpr DirMask bit(Dir d) { return static_cast<DirMask>(1u << d); }
constexpr Dir opposite(Dir d) { return d == kRamp ? kRamp : static_cast<Dir>(d ^ 1); }
constexpr bool is_diagonal(Dir d) { return d >= kNE && d <= kSE; }
constexpr bool is_skip(Dir d) { return d == kSkipE || d == kSkipW; }
// Border links that can carry an edge port (seed 000: peripheral PEs couple to I/O FPGAs
// through their N/S/E/W couplings [0285]).
constexpr bool is_axis(Dir d) { return d <= kS; }

// Row and column step of the mesh and diagonal directions (0 for skip and ramp).
constexpr int drow(Dir d) {
  switch (d) {
    case kN: case kNE: case kNW: return 1;
    case kS: case kSE: case kSW: return -1;
    default: return 0;
  }
}
constexpr int dcol(Dir d) {
  switch (d) {
    case kE: case kNE: case kSE: return 1;
    case kW: case kNW: case kSW: return -1;
    default: return 0;
  }
}

inline const char* dir_name(Dir d) {
  static constexpr const char* kNames[kNumDirs] = {"E",  "W",  "N",  "S",      "NE",    "SW",
                                                   "NW", "SE", "SKIP_E", "SKIP_W", "RAMP"};
  return d < kNumDirs ? kNames[d] : "?";
}

// Lowest direction in a non-empty mask.
inline Dir first_dir(DirMask m) { return static_cast<Dir>(std::countr_zero(m)); }

}  // namespace wafersim::fabric
