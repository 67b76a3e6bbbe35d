// The arithmetic of a bulk vector operation many elements at a time (bulk_vector.hpp):
// fp16 and fp32 add, subtract, multiply and multiply-accumulate gathered into arrays and
// computed by the lane loops of numerics/fast_fma_lanes.hpp, which give the bits the
// element-by-element datapath gives. Computing elements of later iterations before
// earlier ones have written is only allowed when no element reads what another writes.
#pragma once

#include <cstdint>
#include <cstring>

#include "wafersim/numerics/fp_control.hpp"
#include "wafersim/numerics/lfsr.hpp"
#include "wafersim/pe/isa_tables.hpp"

namespace wafersim::pe {

// One source of the bulk loop: memory elements at a fixed stride, or a fixed value.
struct BulkSource {
  const uint8_t* mem = nullptr;  // the first element of a 1D memory vector, or null
  int64_t stride = 0;
  uint32_t value = 0;
  int bytes = 2;

  uint32_t at(int64_t e) const {
    if (mem == nullptr) return value;
    const uint8_t* p = mem + e * stride;
    if (bytes == 4) {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
};

// A 1D memory destination.
struct BulkDest {
  uint8_t* mem = nullptr;  // its first element
  int64_t stride = 0;
  int bytes = 2;
};

// Computes elements 0 .. n-1 of `op` (types `src`, `dst` as datapath::compute takes them;
// c: the multiply-accumulate scalar) into `d`, exactly as n calls of datapath::compute
// would, in order, each iteration reading before it writes. Returns false, having done
// nothing, when `op` has no lane loop or the destination overlaps a source other than
// element for element.
bool bulk_lanes(isa::VecOp op, isa::Elem src, isa::Elem dst, const BulkSource& a,
                const BulkSource& b, uint32_t c, const BulkDest& d, uint64_t n,
                const numerics::FpControl& ctl, numerics::LfsrBank& rng);

}  // namespace wafersim::pe
