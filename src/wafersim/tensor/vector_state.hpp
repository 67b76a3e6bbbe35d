// Architectural state of the vector engine besides the input queue and memories: the aliased
// register file, the lane-mask registers [0058], the per-lane carry vector and the sticky
// floating-point status bits [0059].
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "wafersim/tensor/vector_regfile.hpp"

namespace wafersim::tensor {

// Sticky IEEE status, OR-ed over lanes and instructions until cleared [0059].
struct FpStatus {
  bool invalid = false;    // NV
  bool overflow = false;   // OF
  bool underflow = false;  // UF (tiny before rounding and inexact)
  bool inexact = false;    // NX
};

struct VectorState {
  static constexpr int kMaskCount = 4;

  explicit VectorState(int lanes_)
      : regs(lanes_), carry(static_cast<size_t>(lanes_), 0) {
    for (auto& m : masks) m.assign(static_cast<size_t>(lanes_), 0);
  }
  int lanes() const { return regs.lanes(); }

  VectorRegFile regs;
  std::array<std::vector<uint8_t>, kMaskCount> masks;  // one 0/1 byte per lane
  std::vector<uint8_t> carry;                          // carry, borrow or signed overflow
  FpStatus fp;
};

}  // namespace wafersim::tensor
