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
    // Each row's marks on cache lines of their own: neighbouring rows run in other threads.
    stride_ = (words_ + kLineWords - 1) / kLineWords * kLineWords;
    sets_ = sets;
    const size_t routers = static_cast<size_t>(rows) * static_cast<size_t>(cols);
    for (int i = 0; i < sets * kSources; ++i) {
      dirs_[i].assign(routers, 0);
      marks_[i].assign(static_cast<size_t>(rows) * stride_ + kLineWords, 0);
      const auto addr = reinterpret_cast<uintptr_t>(marks_[i].data());
      first_[i] = (kLineWords - (addr / sizeof(uint64_t)) % kLineWords) % kLineWords;
    }
  }

  size_t words_per_row() const { return words_; }

  // Phase A posts a wavelet from source class `source` arriving in cycle `arrival` at the
  // router with id n, column c of row r: dirs(source, arrival)[n] |= bit(input direction)
  // and bit c of marks(source, arrival, r). Phase B reads both and clears them.
  DirMask* dirs(int source, uint64_t arrival) { return dirs_[index(source, arrival)].data(); }
  uint64_t* marks(int source, uint64_t arrival, int row) {
    const int i = index(source, arrival);
    return &marks_[i][first_[i] + static_cast<size_t>(row) * stride_];
  }

 private:
  int index(int source, uint64_t arrival) const {
    return static_cast<int>(arrival & static_cast<uint64_t>(sets_ - 1)) * kSources + source;
  }

  static constexpr size_t kLineWords = 64 / sizeof(uint64_t);
  size_t words_ = 0;
  size_t stride_ = 0;  // words from one row's marks to the next: whole cache lines
  int sets_ = 1;
  size_t first_[2 * kSources] = {};  // first word of row 0 in each marks vector: line-aligned
  std::vector<DirMask> dirs_[2 * kSources];   // by set and source class, then router id
  std::vector<uint64_t> marks_[2 * kSources]; // by set and source class, then row and word
};

}  // namespace wafersim::fabric
