// Which links exist between which routers: the 2D mesh of seed 000 [0294] with its optional
// skip links (horizontal) and loop links (vertical wrap) [0294]-[0297], plus the diagonal
// links of seed 003 (one family or both) [0032].
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "wafersim/fabric/direction.hpp"

namespace wafersim::fabric {

// The named kinds of topology (the Python API's `topology=`): which diagonal families a
// mesh has [0032].
struct TopologyKind {
  const char* name;
  bool diag_ne;
  bool diag_nw;
};
inline constexpr std::array<TopologyKind, 4> kTopologyKinds = {{
    {"mesh", false, false},
    {"mesh+diag", true, true},
    {"mesh+diag_ne", true, false},
    {"mesh+diag_nw", false, true},
}};
// The kind called `name`; ConfigError listing the names otherwise.
const TopologyKind& topology_kind(const std::string& name);

struct Topology {
  int rows = 1;
  int cols = 1;
  bool diag_ne = false;     // the NE/SW family: (0,0)-(1,1)-(2,2) ... ("second diagonal" [0032])
  bool diag_nw = false;     // the NW/SE family: (0,3)-(1,2)-(2,1) ... ("first diagonal" [0032])
  int skip = 0;             // 0: none; N: columns c and c+N are joined when c % N == 0 [0296]
  bool loop = false;        // each column's bottom and top routers are joined [0297]
  int diag_hop_cycles = 1;  // a diagonal hop takes 1 or 2 cycles; every other hop 1 [0294]

  // Throws ConfigError naming the field when a value is out of range.
  void validate() const;

  int64_t size() const { return static_cast<int64_t>(rows) * cols; }
  bool inside(int64_t r, int64_t c) const { return r >= 0 && r < rows && c >= 0 && c < cols; }
  uint32_t id(int r, int c) const { return static_cast<uint32_t>(r * cols + c); }
  // Signed id for neighbour(): keeps `cond ? at(r, c) : -1` from converting -1 to unsigned.
  int64_t at(int r, int c) const { return static_cast<int64_t>(r) * cols + c; }
  bool has_diagonals() const { return diag_ne || diag_nw; }
  bool family_enabled(Dir d) const {
    return (d == kNE || d == kSW) ? diag_ne : (d == kNW || d == kSE) ? diag_nw : false;
  }

  // The router across link `d` from (r, c), or -1 when there is none (ramp: -1).
  int64_t neighbour(int r, int c, Dir d) const {
    switch (d) {
      case kE: return c + 1 < cols ? at(r, c + 1) : -1;
      case kW: return c > 0 ? at(r, c - 1) : -1;
      case kN: return r + 1 < rows ? at(r + 1, c) : (loop ? at(0, c) : -1);
      case kS: return r > 0 ? at(r - 1, c) : (loop ? at(rows - 1, c) : -1);
      case kSkipE: return skip > 0 && c % skip == 0 && c + skip < cols ? at(r, c + skip) : -1;
      case kSkipW: return skip > 0 && c % skip == 0 && c - skip >= 0 ? at(r, c - skip) : -1;
      case kRamp: return -1;
      default: {  // diagonals
        if (!family_enabled(d)) return -1;
        const int rr = r + drow(d), cc = c + dcol(d);
        return rr >= 0 && rr < rows && cc >= 0 && cc < cols ? at(rr, cc) : -1;
      }
    }
  }

  // A border N/S/E/W coupling with no router behind it: a host (edge) port can sit there.
  bool is_edge(int r, int c, Dir d) const {
    return is_axis(d) && neighbour(r, c, d) < 0;
  }

  // Every link port of (r, c) that leads to another router.
  DirMask link_ports(int r, int c) const {
    DirMask m = 0;
    for (int d = 0; d < kRamp; ++d) {
      if (neighbour(r, c, static_cast<Dir>(d)) >= 0) m |= bit(static_cast<Dir>(d));
    }
    return m;
  }

  // The direction of a link from router (r0, c0) to router (r1, c1), mesh links first
  // (E, W, N, S, then the diagonals, then skip links); nullopt when no link joins them.
  std::optional<Dir> link_between(int r0, int c0, int r1, int c1) const {
    if (!inside(r1, c1)) return std::nullopt;
    for (int d = 0; d < kRamp; ++d) {
      if (neighbour(r0, c0, static_cast<Dir>(d)) == at(r1, c1)) return static_cast<Dir>(d);
    }
    return std::nullopt;
  }

  // The edge port that a point one step outside the border names: (r, -1) is the W port of
  // (r, 0), (rows, c) the N port of (rows - 1, c), and so on (seed 000's I/O couplings
  // [0285]). nullopt for any other point, and where a loop link takes the place of the port.
  std::optional<std::pair<uint32_t, Dir>> edge_port(int64_t r, int64_t c) const;

  // Cycles a wavelet takes on link `d` (the ramp and edge ports take one cycle too).
  int hop_cycles(Dir d) const { return is_diagonal(d) ? diag_hop_cycles : 1; }

  // The kind's name: "mesh", "mesh+diag", "mesh+diag_ne" or "mesh+diag_nw".
  const char* kind_name() const;
  std::string describe() const;  // "4x4 mesh+diag, skip 2, loop"
};

}  // namespace wafersim::fabric
