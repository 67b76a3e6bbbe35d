// Which routers receive a wavelet on which input directions, recorded by the senders in
// phase A and read by the receivers in phase B (docs/fabric.md, "cycle contract").
//
// Rows run in parallel, so every entry must have one writing row. A receiver's entry is
// therefore split by where the wavelet comes from: its own row (E/W and skip links), the
// row that sends northward into it (N, NE, NW; with loop links the top row for row 0), or
// the row that sends southward into it. Each sender row writes only its own class of
// entries, each receiver row reads and clears its entries in phase B, when no row writes.
// Wavelets on 2-cycle diagonal links arrive one cycle later: entries come in two sets, by
// the parity of the arrival cycle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "wafersim/fabric/direction.hpp"

namespace wafersim::fabric {

class ArrivalBoard {
 public:
  enum Source : int { kSameRow = 0, kFromSouth = 1, kFromNorth = 2 };
  static constexpr int kSources = 3;

  // The source class of a wavelet sent on link `d` (seen from the receiver).
  static constexpr int source_of(Dir d) {
    return drow(d) > 0 ? kFromSouth : drow(d) < 0 ? kFromNorth : kSameRow;
  }

  void resize(int rows, int cols, int sets) {
    words_ = static_cast<size_t>((cols + 63) / 64);
    sets_ = sets;
    const size_t routers = static_cast<size_t>(rows) * static_cast<size_t>(cols);
    for (int i = 0; i < sets * kSources; ++i) {
      dirs_[i].assign(routers, 0);
      marks_[i].assign(static_cast<size_t>(rows) * words_, 0);
    }
  }

  size_t words_per_row() const { return words_; }

  // Phase A posts a wavelet from source class `source` arriving in cycle `arrival` at the
  // router with id n, column c of row r: dirs(source, arrival)[n] |= bit(input direction)
  // and bit c of marks(source, arrival, r). Phase B reads both and clears them.
  DirMask* dirs(int source, uint64_t arrival) { return dirs_[index(source, arrival)].data(); }
  uint64_t* marks(int source, uint64_t arrival, int row) {
    return &marks_[index(source, arrival)][static_cast<size_t>(row) * words_];
  }

 private:
  int index(int source, uint64_t arrival) const {
    return static_cast<int>(arrival & static_cast<uint64_t>(sets_ - 1)) * kSources + source;
  }

  size_t words_ = 0;
  int sets_ = 1;
  std::vector<DirMask> dirs_[2 * kSources];   // by set and source class, then router id
  std::vector<uint64_t> marks_[2 * kSources]; // by set and source class, then row and word
};

}  // namespace wafersim::fabric
