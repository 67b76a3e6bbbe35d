#include "wafersim/pe/bulk_lanes.hpp"

#include <algorithm>
#include <cstdlib>

#include "wafersim/pe/datapath.hpp"

namespace wafersim::pe {

using isa::Elem;
using isa::VecOp;

namespace {

// Elements per call of the lane loops: operands gathered on the stack.
constexpr uint64_t kChunk = 64;

// The bytes n elements at `p` touch: [lo, hi).
struct ByteRange {
  uintptr_t lo, hi;
};

ByteRange range_of(const uint8_t* p, int64_t stride, int bytes, uint64_t n) {
  const auto first = reinterpret_cast<uintptr_t>(p);
  const int64_t reach = static_cast<int64_t>(n - 1) * stride;
  const uintptr_t last = first + static_cast<uintptr_t>(reach);
  return {std::min(first, last), std::max(first, last) + static_cast<uintptr_t>(bytes)};
}

// Whether computing all n elements before writing any reads what the element-by-element
// order reads: `s` shares no byte with the destination, or is the destination itself
// element for element (each element reads only the bytes it writes itself).
bool independent(const BulkSource& s, const BulkDest& d, uint64_t n) {
  if (s.mem == nullptr) return true;
  if (s.mem == d.mem && s.stride == d.stride && s.bytes == d.bytes &&
      std::abs(d.stride) >= d.bytes) {
    return true;
  }
  const ByteRange rs = range_of(s.mem, s.stride, s.bytes, n);
  const ByteRange rd = range_of(d.mem, d.stride, d.bytes, n);
  return rs.hi <= rd.lo || rd.hi <= rs.lo;
}

// Elements e0 .. e0+m-1 of `s`.
void gather(const BulkSource& s, uint64_t e0, uint64_t m, uint32_t* out) {
  if (s.mem == nullptr) {
    std::fill(out, out + m, s.value);
  } else if (s.bytes == 2 && s.stride == 2) {
    uint16_t h[kChunk];
    std::memcpy(h, s.mem + e0 * 2, m * 2);
    std::copy(h, h + m, out);
  } else if (s.bytes == 4 && s.stride == 4) {
    std::memcpy(out, s.mem + e0 * 4, m * 4);
  } else {
    for (uint64_t k = 0; k < m; ++k) out[k] = s.at(static_cast<int64_t>(e0 + k));
  }
}

void scatter(const BulkDest& d, uint64_t e0, uint64_t m, const uint32_t* in) {
  if (d.bytes == 4 && d.stride == 4) {
    std::memcpy(d.mem + e0 * 4, in, m * 4);
    return;
  }
  for (uint64_t k = 0; k < m; ++k) {
    uint8_t* p = d.mem + static_cast<int64_t>(e0 + k) * d.stride;
    if (d.bytes == 4) {
      std::memcpy(p, &in[k], 4);
    } else {
      const uint16_t v = static_cast<uint16_t>(in[k]);
      std::memcpy(p, &v, 2);
    }
  }
}

}  // namespace

bool bulk_lanes(VecOp op, Elem src, Elem dst, const BulkSource& a, const BulkSource& b,
                uint32_t c, const BulkDest& d, uint64_t n, const numerics::FpControl& ctl,
                numerics::LfsrBank& rng) {
  if (n == 0 || !datapath::has_lanes(op, src, dst) || !independent(a, d, n) ||
      !independent(b, d, n)) {
    return false;
  }
  for (uint64_t e0 = 0; e0 < n; e0 += kChunk) {
    const uint64_t m = std::min(kChunk, n - e0);
    uint32_t x[kChunk], y[kChunk], r[kChunk];
    gather(a, e0, m, x);
    gather(b, e0, m, y);
    datapath::compute_lanes(op, src, dst, x, y, c, r, m, ctl, rng);
    scatter(d, e0, m, r);
  }
  return true;
}

}  // namespace wafersim::pe
