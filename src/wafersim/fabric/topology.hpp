// Which links exist between which routers: the 2D mesh of seed 000 [0294] with its optional
// skip links (horizontal) and loop links (vertical wrap) [0294]-[0297], plus the diagonal
// links of seed 003 (one family or both) [0032].
#pragma once

#include <cstdint>
#include <string>

#include "wafersim/fabric/direction.hpp"

namespace wafersim::fabric {

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

  // Cycles a wavelet takes on link `d` (the ramp and edge ports take one cycle too).
  int hop_cycles(Dir d) const { return is_diagonal(d) ? diag_hop_cycles : 1; }

  std::string describe() const;
};

}  // namespace wafersim::fabric
