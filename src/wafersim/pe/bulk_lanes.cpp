#include "wafersim/pe/bulk_lanes.hpp"

#include <algorithm>
#include <cstdlib>

#include "wafersim/numerics/convert.hpp"
#include "wafersim/numerics/fast_fma_lanes.hpp"
#include "wafersim/numerics/float_format.hpp"

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

// Elements e0 .. e0+m-1 of `s` as T.
template <typename T>
void gather(const BulkSource& s, uint64_t e0, uint64_t m, T* out) {
  if (s.mem == nullptr) {
    std::fill(out, out + m, static_cast<T>(s.value));
  } else if (s.bytes == int{sizeof(T)} && s.stride == int64_t{sizeof(T)}) {
    std::memcpy(out, s.mem + e0 * sizeof(T), m * sizeof(T));
  } else {
    for (uint64_t k = 0; k < m; ++k) out[k] = static_cast<T>(s.at(static_cast<int64_t>(e0 + k)));
  }
}

template <typename T>
void scatter(const BulkDest& d, uint64_t e0, uint64_t m, const T* in) {
  if (d.bytes == int{sizeof(T)} && d.stride == int64_t{sizeof(T)}) {
    std::memcpy(d.mem + e0 * sizeof(T), in, m * sizeof(T));
    return;
  }
  for (uint64_t k = 0; k < m; ++k) {
    std::memcpy(d.mem + static_cast<int64_t>(e0 + k) * d.stride, &in[k], sizeof(T));
  }
}

// The fused multiply-add each operation is (datapath.cpp, fast_fma.cpp): x * y + z.
template <typename T>
void operands(VecOp op, const BulkSource& a, const BulkSource& b, uint32_t c, uint64_t e0,
              uint64_t m, T* x, T* y, T* z) {
  const numerics::FloatFormat& f = sizeof(T) == 4 ? numerics::kFp32 : numerics::kFp16;
  const T sign = static_cast<T>(f.sign_mask());
  const T one = static_cast<T>(uint64_t{static_cast<uint64_t>(f.bias())} << f.man_bits);
  switch (op) {
    case VecOp::fmac:  // src0 + src1 * scalar
      gather(b, e0, m, x);
      std::fill(y, y + m, static_cast<T>(c));
      gather(a, e0, m, z);
      break;
    case VecOp::fadd:
    case VecOp::fsub:
      gather(a, e0, m, x);
      std::fill(y, y + m, one);
      gather(b, e0, m, z);
      if (op == VecOp::fsub) {
        for (uint64_t k = 0; k < m; ++k) {
          if (!numerics::is_nan(z[k], f)) z[k] = static_cast<T>(z[k] ^ sign);
        }
      }
      break;
    default:  // fmul
      gather(a, e0, m, x);
      gather(b, e0, m, y);
      std::fill(z, z + m, sign);
      break;
  }
}

// fmac_mixed: the fp16 operands widened exactly to fp32, one fp32 fused multiply-add.
void mixed_operands(const BulkSource& a, const BulkSource& b, uint32_t c, uint64_t e0,
                    uint64_t m, uint32_t* x, uint32_t* y, uint32_t* z) {
  uint16_t h[kChunk];
  gather(b, e0, m, h);
  for (uint64_t k = 0; k < m; ++k) x[k] = numerics::float_bits(numerics::fp16_to_fp32(h[k]));
  std::fill(y, y + m, numerics::float_bits(numerics::fp16_to_fp32(static_cast<uint16_t>(c))));
  gather(a, e0, m, z);
}

bool has_lanes(VecOp op, Elem src, Elem dst) {
  switch (op) {
    case VecOp::fadd:
    case VecOp::fsub:
    case VecOp::fmul:
    case VecOp::fmac: return (src == Elem::fp16 || src == Elem::fp32) && dst == src;
    case VecOp::fmac_mixed: return src == Elem::fp16 && dst == Elem::fp32;
    default: return false;
  }
}

}  // namespace

bool bulk_lanes(VecOp op, Elem src, Elem dst, const BulkSource& a, const BulkSource& b,
                uint32_t c, const BulkDest& d, uint64_t n, const numerics::FpControl& ctl,
                numerics::LfsrBank& rng) {
  if (n == 0 || !has_lanes(op, src, dst) || !independent(a, d, n) || !independent(b, d, n)) {
    return false;
  }
  for (uint64_t e0 = 0; e0 < n; e0 += kChunk) {
    const uint64_t m = std::min(kChunk, n - e0);
    if (dst == Elem::fp16) {
      uint16_t x[kChunk], y[kChunk], z[kChunk], r[kChunk];
      operands(op, a, b, c, e0, m, x, y, z);
      numerics::fast_fma16_lanes(x, y, z, r, m, ctl, &rng);
      scatter(d, e0, m, r);
    } else {
      uint32_t x[kChunk], y[kChunk], z[kChunk], r[kChunk];
      if (op == VecOp::fmac_mixed) {
        mixed_operands(a, b, c, e0, m, x, y, z);
      } else {
        operands(op, a, b, c, e0, m, x, y, z);
      }
      numerics::fast_fma32_lanes(x, y, z, r, m, ctl, &rng);
      scatter(d, e0, m, r);
    }
  }
  return true;
}

}  // namespace wafersim::pe
