// Which routers of a row put a wavelet on each link direction in a cycle, as bit sets over
// the row's columns: how packet mode's phase B finds its arrivals (fabric_packet_cycle.cpp).
//
// A sending row writes only its own block, in phase A; in phase B a receiving row reads the
// blocks of the rows that send into it and shifts them by the link's column step. So the
// sender sets one bit per wavelet, and the receiver gets a whole row's arrivals from one
// direction in a few word operations. Each block carries the cycle it was written in: a
// row that did not run phase A in a cycle left an older block, which reads as "sent
// nothing". Blocks come in two sets, by cycle parity, when 2-cycle diagonal links read
// the previous cycle's sends. The ramp's entry records the other way in: the routers whose
// host port offered a wavelet on the on-ramp (read by the row itself in phase B).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "wafersim/fabric/direction.hpp"

namespace wafersim::fabric {

class LinkSends {
 public:
  static constexpr int kPorts = kNumDirs;  // the links' directions, then the on-ramp

  void resize(int rows, int cols, int sets) {
    words_ = static_cast<size_t>((cols + 63) / 64);
    // One block per row and set, on cache lines of its own: neighbouring rows run in other
    // threads.
    stride_ = (1 + kPorts * words_ + kLineWords - 1) / kLineWords * kLineWords;
    rows_ = static_cast<size_t>(rows);
    sets_ = static_cast<size_t>(sets);
    blocks_.assign(sets_ * rows_ * stride_ + kLineWords, 0);
    const auto addr = reinterpret_cast<uintptr_t>(blocks_.data());
    first_ = (kLineWords - (addr / sizeof(uint64_t)) % kLineWords) % kLineWords;
    for (size_t b = 0; b < sets_ * rows_; ++b) blocks_[first_ + b * stride_] = kNoCycle;
  }

  size_t words() const { return words_; }

  // A row's whole block for `cycle` (its cycle stamp first, then the bits), for a wafer
  // split into domains (row_cut.cpp): copied across a cut as it is.
  size_t block_words() const { return 1 + kPorts * words_; }
  uint64_t* block(int row, uint64_t cycle) { return &blocks_[offset(row, cycle)]; }

  // Phase A: the block of `row` for `cycle`, cleared and stamped. The bits of direction d
  // (kRamp: on-ramp offers) start at word d * words().
  uint64_t* begin_row(int row, uint64_t cycle) {
    uint64_t* block = &blocks_[offset(row, cycle)];
    block[0] = cycle;
    for (size_t i = 1; i <= kPorts * words_; ++i) block[i] = 0;
    return block + 1;
  }

  // Phase B: the routers of `row` that sent toward `d` in `cycle`, or nullptr when the row
  // did not run phase A in that cycle.
  const uint64_t* sent(int row, uint64_t cycle, Dir d) const {
    const uint64_t* block = &blocks_[offset(row, cycle)];
    return block[0] == cycle ? block + 1 + static_cast<size_t>(d) * words_ : nullptr;
  }

 private:
  static constexpr size_t kLineWords = 64 / sizeof(uint64_t);
  static constexpr uint64_t kNoCycle = ~uint64_t{0};

  size_t offset(int row, uint64_t cycle) const {
    const size_t set = static_cast<size_t>(cycle & (sets_ - 1));
    return first_ + (set * rows_ + static_cast<size_t>(row)) * stride_;
  }

  size_t words_ = 0;
  size_t stride_ = 0;
  size_t rows_ = 0;
  size_t sets_ = 1;
  size_t first_ = 0;  // first word of the first block: line-aligned
  std::vector<uint64_t> blocks_;
};

}  // namespace wafersim::fabric
