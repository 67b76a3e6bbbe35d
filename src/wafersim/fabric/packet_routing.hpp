// Per-packet routing for NoC studies (packet mode): the router steers each wavelet by the
// destination it carries, like the header routing of seed 003, instead of by color.
//   xy:          X (east/west) first, then Y (north/south): the mesh baseline [0061].
//   diag_first:  diagonal while both coordinates differ, then straight [0036], [0039].
//                With one diagonal family, the diagonal is used only when its signs match
//                the family, else XY (digest 003 section 4.3; the seed gives no rule).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "wafersim/fabric/direction.hpp"
#include "wafersim/fabric/topology.hpp"

namespace wafersim::fabric {

enum class PacketRouting : uint8_t { xy, diag_first };
// Their names, in the order of the enum.
inline constexpr std::array<const char*, 2> kPacketRoutingNames = {"xy", "diag_first"};
inline const char* routing_name(PacketRouting a) {
  return kPacketRoutingNames[static_cast<size_t>(a)];
}
// The algorithm called `name`; ConfigError naming `parameter` and the names otherwise.
PacketRouting routing_named(const std::string& name, const char* parameter);

// Packet destinations pack (row, col) into 16 bits, so packet mode allows 256 x 256.
inline constexpr int kMaxPacketSide = 256;
inline uint16_t pack_dest(int r, int c) { return static_cast<uint16_t>((r << 8) | c); }

// The next direction for a packet whose destination lies dx columns east and dy rows north.
inline Dir packet_step(const Topology& t, PacketRouting alg, int dx, int dy) {
  if (dx == 0 && dy == 0) return kRamp;
  if (alg == PacketRouting::diag_first && dx != 0 && dy != 0) {
    const Dir d = dy > 0 ? (dx > 0 ? kNE : kNW) : (dx > 0 ? kSE : kSW);
    if (t.family_enabled(d)) return d;
  }
  if (dx != 0) return dx > 0 ? kE : kW;
  return dy > 0 ? kN : kS;
}

inline Dir packet_next_dir(const Topology& t, PacketRouting alg, int r, int c, uint16_t dest) {
  return packet_step(t, alg, (dest & 0xFF) - c, (dest >> 8) - r);
}

// The same answers, looked up: packet_step depends only on the signs of the offsets, so
// nine entries hold it, and the signs come from a table too: the cycle loop routes with
// three loads and no branch.
class PacketRouteTable {
 public:
  PacketRouteTable() = default;
  PacketRouteTable(const Topology& t, PacketRouting alg) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const int i = 3 * (dy + 1) + dx + 1;
        dirs_[i] = packet_step(t, alg, dx, dy);
        masks_[i] = bit(dirs_[i]);
      }
    }
  }
  [[gnu::always_inline]] Dir next(int r, int c, uint16_t dest) const {
    return dirs_[index(r, c, dest)];
  }
  // The same, as a Dest mask.
  [[gnu::always_inline]] DirMask next_mask(int r, int c, uint16_t dest) const {
    return masks_[index(r, c, dest)];
  }
  // The answers come in nine cases, by the signs of the offsets: the case of a wavelet,
  // and the direction of each case (for callers that tabulate something else per case).
  [[gnu::always_inline]] static unsigned case_of(int r, int c, uint16_t dest) {
    return index(r, c, dest);
  }
  Dir dir_of_case(unsigned i) const { return dirs_[i]; }
  static constexpr int kCases = 9;

 private:
  // sign(d) + 1 for the offsets d = -255..255, at d + 255.
  static constexpr auto kSignPlusOne = [] {
    std::array<uint8_t, 2 * kMaxPacketSide - 1> s{};
    for (int i = 0; i < 2 * kMaxPacketSide - 1; ++i) {
      const int d = i - (kMaxPacketSide - 1);
      s[static_cast<size_t>(i)] = static_cast<uint8_t>((d > 0) - (d < 0) + 1);
    }
    return s;
  }();
  [[gnu::always_inline]] static unsigned index(int r, int c, uint16_t dest) {
    const unsigned sy = kSignPlusOne[(dest >> 8) - r + kMaxPacketSide - 1];
    const unsigned sx = kSignPlusOne[(dest & 0xFF) - c + kMaxPacketSide - 1];
    return 3 * sy + sx;
  }

  Dir dirs_[9] = {};
  DirMask masks_[9] = {};
};

}  // namespace wafersim::fabric
