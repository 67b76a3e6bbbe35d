// The two messages a domain of a split wafer sends each neighbouring domain per cycle
// (docs/scale.md, "The per-cycle exchange"), each packed by one call for all the cuts
// between the two domains, so that the transport outside the core (Python over MPI, or
// threads in a test) moves one buffer per neighbour per meeting point:
// * after phase A of the border rows, what they sent across the cuts (a flag byte per
//   cut, 1 when its sends follow, then the sends of the cuts that carried something:
//   fabric::Fabric::export_cut_sends);
// * after phase B, what the neighbour's next phase A reads of the border rows facing it:
//   their stall bits, sparse (a bitmap of the nonzero words, then those words), and the
//   holds of their switched slots when the wafer has runtime switches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "wafersim/fabric/fabric.hpp"

namespace wafersim::sim {

class CutMessages {
 public:
  // neighbours[k]: the cuts to the k-th neighbouring domain as (this domain's row, the
  // neighbour's row), in an order both domains share.
  CutMessages(fabric::Fabric& fabric, std::vector<std::vector<std::pair<int, int>>> neighbours);

  size_t neighbours() const { return nb_.size(); }

  size_t sends_capacity(size_t k) const;  // bytes
  // Returns the bytes written (at most sends_capacity(k)).
  size_t write_sends(size_t k, uint64_t cycle, uint8_t* out, size_t capacity);
  // `in`: what the neighbour's write_sends wrote (`bytes` may run past its end).
  void read_sends(size_t k, uint64_t cycle, const uint8_t* in, size_t bytes);

  // 64-bit words, enough for the message either way (the holds follow the routes).
  size_t border_capacity(size_t k);
  size_t write_borders(size_t k, uint64_t* out, size_t capacity);
  void read_borders(size_t k, const uint64_t* in, size_t words);

 private:
  struct Neighbour {
    std::vector<std::pair<int, int>> cuts;
    std::vector<int> mine, theirs;  // the rows on each side, each once, in cut order
    std::vector<size_t> mine_holds, theirs_holds;  // switched slots of each row
  };
  const Neighbour& at(size_t k) const;
  void count_holds();  // again when the routes changed

  fabric::Fabric& fabric_;
  std::vector<Neighbour> nb_;
  uint64_t holds_version_ = ~uint64_t{0};
};

}  // namespace wafersim::sim
