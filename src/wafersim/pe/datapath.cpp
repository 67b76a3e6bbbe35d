#include "wafersim/pe/datapath.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "wafersim/errors.hpp"
#include "wafersim/numerics/convert.hpp"
#include "wafersim/numerics/fast_fma.hpp"
#include "wafersim/numerics/fp_arith.hpp"
#include "wafersim/numerics/fast_fma_lanes.hpp"

namespace wafersim::pe::datapath {

using isa::Elem;
using isa::VecOp;
using numerics::FloatFormat;
using numerics::kFp16;
using numerics::kFp32;
using numerics::kFp64;

namespace {

const FloatFormat& fmt(Elem e) { return e == Elem::fp32 ? kFp32 : kFp16; }

double to_double(uint32_t bits, Elem e) {
  if (e == Elem::fp32) return static_cast<double>(numerics::bits_float(bits));
  return static_cast<double>(numerics::fp16_to_fp32(static_cast<uint16_t>(bits)));
}

bool is_nan(uint32_t bits, Elem e) { return numerics::is_nan(bits, fmt(e)); }

uint32_t round_double(double x, Elem e, const numerics::FpControl& ctl,
                      numerics::LfsrBank& rng) {
  return static_cast<uint32_t>(
      numerics::convert_bits(numerics::double_bits(x), kFp64, fmt(e), ctl, &rng));
}

// maxNum / minNum: a NaN operand yields the other operand; -0 < +0.
uint32_t fmax_min(uint32_t a, uint32_t b, Elem e, bool want_max) {
  const FloatFormat& f = fmt(e);
  const bool an = is_nan(a, e), bn = is_nan(b, e);
  if (an && bn) return static_cast<uint32_t>(a | f.quiet_bit());
  if (an) return b;
  if (bn) return a;
  const double x = to_double(a, e), y = to_double(b, e);
  if (x == y) {  // equal values: order the zeros by sign
    const bool a_neg = (a & f.sign_mask()) != 0;
    return (a_neg == want_max) ? b : a;
  }
  return ((x > y) == want_max) ? a : b;
}

uint32_t to_int16(uint32_t bits, const numerics::FpControl& ctl, numerics::LfsrBank& rng) {
  const double x = to_double(bits, Elem::fp16);
  if (std::isnan(x)) return 0;
  double r;
  switch (ctl.mode) {
    case numerics::RoundingMode::nearest_even: r = std::nearbyint(x); break;  // FE_TONEAREST
    case numerics::RoundingMode::nearest_away: r = std::round(x); break;
    case numerics::RoundingMode::toward_zero: r = std::trunc(x); break;
    case numerics::RoundingMode::toward_positive: r = std::ceil(x); break;
    case numerics::RoundingMode::toward_negative: r = std::floor(x); break;
    case numerics::RoundingMode::stochastic: {
      // [0694]: add N random bits below the integer ULP; a carry rounds the magnitude up.
      const double mag = std::fabs(x);
      const double ip = std::floor(mag);
      const int n = ctl.stochastic_bits;
      const double scaled = std::ldexp(mag - ip, n);
      const uint64_t lower = static_cast<uint64_t>(std::floor(scaled));
      const uint64_t draw = rng.next_bits(ctl.rng, n);
      const double up = ((lower + draw) >> n) ? 1.0 : 0.0;
      r = std::copysign(ip + up, x);
      break;
    }
    default: r = std::nearbyint(x);
  }
  if (r > 32767.0) r = 32767.0;
  if (r < -32768.0) r = -32768.0;
  return static_cast<uint16_t>(static_cast<int16_t>(r));
}

uint32_t i16_to_fp(uint32_t bits, Elem dst, const numerics::FpControl& ctl,
                   numerics::LfsrBank& rng) {
  const double x = static_cast<double>(static_cast<int16_t>(bits & 0xFFFF));
  if (x == 0.0) return 0;
  return round_double(x, dst, ctl, rng);
}

int16_t s16(uint32_t v) { return static_cast<int16_t>(v & 0xFFFF); }

}  // namespace

uint32_t compute(VecOp op, Elem src, Elem dst, uint32_t a, uint32_t b, uint32_t c,
                 const numerics::FpControl& ctl, numerics::LfsrBank& rng) {
  const FloatFormat& f = fmt(src);
  switch (op) {
    case VecOp::fadd:
      return static_cast<uint32_t>(numerics::fast_add_bits(a, b, f, ctl, &rng));
    case VecOp::fsub:
      return static_cast<uint32_t>(numerics::fast_sub_bits(a, b, f, ctl, &rng));
    case VecOp::fmul:
      return static_cast<uint32_t>(numerics::fast_mul_bits(a, b, f, ctl, &rng));
    case VecOp::fmac:  // dst = src0 + src1 * scalar, one rounding
      return static_cast<uint32_t>(numerics::fast_fma_bits(b, c, a, f, ctl, &rng));
    case VecOp::fmac_mixed: {
      // fp16 operands widen exactly to fp32 and their product is exact in fp32's range,
      // so one fp32 fused multiply-add rounds the whole expression once.
      const uint32_t b32 = numerics::float_bits(numerics::fp16_to_fp32(static_cast<uint16_t>(b)));
      const uint32_t c32 = numerics::float_bits(numerics::fp16_to_fp32(static_cast<uint16_t>(c)));
      return numerics::fast_fma32(b32, c32, a, ctl, &rng);
    }
    case VecOp::fmax: return fmax_min(a, b, src, true);
    case VecOp::fmin: return fmax_min(a, b, src, false);
    case VecOp::fneg: return static_cast<uint32_t>(b ^ f.sign_mask());
    case VecOp::fabs: return static_cast<uint32_t>(b & ~f.sign_mask());
    case VecOp::relu:
      if (is_nan(b, src)) return b;
      return to_double(b, src) > 0.0 ? b : 0u;
    case VecOp::drelu: {
      const uint32_t one = static_cast<uint32_t>(static_cast<uint64_t>(f.bias()) << f.man_bits);
      return (!is_nan(b, src) && to_double(b, src) > 0.0) ? one : 0u;
    }
    case VecOp::sigmoid: {
      if (is_nan(b, src)) return static_cast<uint32_t>(b | f.quiet_bit());
      const double x = to_double(b, src);
      return round_double(1.0 / (1.0 + std::exp(-x)), src, ctl, rng);
    }
    case VecOp::tanh: {
      if (is_nan(b, src)) return static_cast<uint32_t>(b | f.quiet_bit());
      const double x = to_double(b, src);
      if (x == 0.0) return b;  // keeps the sign of zero
      return round_double(std::tanh(x), src, ctl, rng);
    }
    case VecOp::cvt:
      if (src == Elem::fp16 && dst == Elem::fp32)
        return numerics::float_bits(numerics::fp16_to_fp32(static_cast<uint16_t>(b)));
      if (src == Elem::fp32 && dst == Elem::fp16)
        return static_cast<uint32_t>(numerics::convert_bits(b, kFp32, kFp16, ctl, &rng));
      if (src == Elem::i16) return i16_to_fp(b, dst, ctl, rng);
      return to_int16(b, ctl, rng);
    case VecOp::mov: return b;
    case VecOp::add: return static_cast<uint16_t>(a + b);
    case VecOp::sub: return static_cast<uint16_t>(a - b);
    case VecOp::and_: return static_cast<uint16_t>(a & b);
    case VecOp::or_: return static_cast<uint16_t>(a | b);
    case VecOp::xor_: return static_cast<uint16_t>(a ^ b);
    case VecOp::shl: return static_cast<uint16_t>((a & 0xFFFF) << (b & 15));
    case VecOp::shr: return static_cast<uint16_t>((a & 0xFFFF) >> (b & 15));
    case VecOp::sar: return static_cast<uint16_t>(static_cast<int16_t>(s16(a) >> (b & 15)));
    case VecOp::mul: return static_cast<uint16_t>((a & 0xFFFF) * (b & 0xFFFF));
    case VecOp::not_: return static_cast<uint16_t>(~b);
    case VecOp::neg: return static_cast<uint16_t>(0u - b);
    default: break;
  }
  internal_error("datapath: operation has no lane function");
}

namespace {

// Lanes per call of the lane loops: operands staged on the stack.
constexpr size_t kLaneChunk = 64;

// The fused multiply-add x * y + z each operation is, as compute() forms it
// (numerics::add_as_fma and its siblings; one simple loop per operation, which the
// compiler vectorizes).
template <typename T>
void fma_operands(VecOp op, const uint32_t* a, const uint32_t* b, uint32_t c, size_t n, T* x,
                  T* y, T* z) {
  const FloatFormat& f = sizeof(T) == 4 ? kFp32 : kFp16;
  const auto form = [&](auto as_fma) {
    for (size_t k = 0; k < n; ++k) {
      const numerics::FmaOperands o = as_fma(a[k], b[k], f);
      x[k] = static_cast<T>(o.x);
      y[k] = static_cast<T>(o.y);
      z[k] = static_cast<T>(o.z);
    }
  };
  switch (op) {
    case VecOp::fmac:  // a + b * c
      for (size_t k = 0; k < n; ++k) {
        x[k] = static_cast<T>(b[k]);
        y[k] = static_cast<T>(c);
        z[k] = static_cast<T>(a[k]);
      }
      return;
    case VecOp::fadd: form(numerics::add_as_fma); return;
    case VecOp::fsub: form(numerics::sub_as_fma); return;
    default: form(numerics::mul_as_fma); return;  // fmul
  }
}

// fmac_mixed: the fp16 operands widened exactly to fp32, one fp32 fused multiply-add.
void mixed_operands(const uint32_t* a, const uint32_t* b, uint32_t c, size_t n, uint32_t* x,
                    uint32_t* y, uint32_t* z) {
  const uint32_t c32 = numerics::float_bits(numerics::fp16_to_fp32(static_cast<uint16_t>(c)));
  for (size_t k = 0; k < n; ++k) {
    x[k] = numerics::float_bits(numerics::fp16_to_fp32(static_cast<uint16_t>(b[k])));
    y[k] = c32;
    z[k] = a[k];
  }
}

}  // namespace

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

void compute_lanes(VecOp op, Elem src, Elem dst, const uint32_t* a, const uint32_t* b,
                   uint32_t c, uint32_t* r, size_t n, const numerics::FpControl& ctl,
                   numerics::LfsrBank& rng) {
  if (n < 2 || !has_lanes(op, src, dst)) {
    for (size_t k = 0; k < n; ++k) r[k] = compute(op, src, dst, a[k], b[k], c, ctl, rng);
    return;
  }
  for (size_t k0 = 0; k0 < n; k0 += kLaneChunk) {
    const size_t m = std::min(kLaneChunk, n - k0);
    if (dst == Elem::fp16) {
      uint16_t x[kLaneChunk], y[kLaneChunk], z[kLaneChunk], out[kLaneChunk];
      fma_operands(op, a + k0, b + k0, c, m, x, y, z);
      numerics::fast_fma16_lanes(x, y, z, out, m, ctl, &rng);
      std::copy(out, out + m, r + k0);
    } else {
      uint32_t x[kLaneChunk], y[kLaneChunk], z[kLaneChunk];
      if (op == VecOp::fmac_mixed) {
        mixed_operands(a + k0, b + k0, c, m, x, y, z);
      } else {
        fma_operands(op, a + k0, b + k0, c, m, x, y, z);
      }
      numerics::fast_fma32_lanes(x, y, z, r + k0, m, ctl, &rng);
    }
  }
}

bool compare(VecOp op, Elem src, uint32_t a, uint32_t b) {
  switch (op) {
    case VecOp::lt: return s16(a) < s16(b);
    case VecOp::le: return s16(a) <= s16(b);
    case VecOp::eq: return (a & 0xFFFF) == (b & 0xFFFF);
    case VecOp::ltu: return (a & 0xFFFF) < (b & 0xFFFF);
    case VecOp::tst: return (a & b & 0xFFFF) != 0;
    case VecOp::flt: return to_double(a, src) < to_double(b, src);  // false on NaN
    case VecOp::fle: return to_double(a, src) <= to_double(b, src);
    case VecOp::feq: return to_double(a, src) == to_double(b, src);
    default: break;
  }
  internal_error("datapath: operation is not a comparison");
}

}  // namespace wafersim::pe::datapath
