#include "wafersim/numerics/rounding.hpp"

#include "wafersim/errors.hpp"

namespace wafersim::numerics {

namespace {

// Bits [lo, lo + n) of x, with positions outside 0..127 read as zero.
uint64_t bit_field(u128 x, int lo, int n) {
  uint64_t r = 0;
  for (int i = n - 1; i >= 0; --i) {
    const int pos = lo + i;
    r <<= 1;
    if (pos >= 0 && pos < 128) r |= static_cast<uint64_t>((x >> pos) & 1u);
  }
  return r;
}

bool any_bits_below(u128 x, int pos) {  // any set bit at a position < pos
  if (pos <= 0) return false;
  if (pos >= 128) return x != 0;
  return (x & ((u128{1} << pos) - 1)) != 0;
}

uint64_t overflow_result(const FloatFormat& f, bool sign, const FpControl& ctl) {
  bool to_inf = true;
  switch (ctl.mode) {
    case RoundingMode::toward_zero: to_inf = false; break;
    case RoundingMode::toward_positive: to_inf = !sign; break;
    case RoundingMode::toward_negative: to_inf = sign; break;
    default: break;
  }
  if (ctl.max_sat) to_inf = false;
  const uint64_t s = sign ? f.sign_mask() : 0;
  return s | (to_inf ? f.inf_bits() : f.max_normal());
}

}  // namespace

uint64_t round_to_format(const WideValue& v, const FloatFormat& f, const FpControl& ctl,
                         LfsrBank* rng) {
  if (v.sig == 0) internal_error("round_to_format called with a zero significand");
  const int M = f.man_bits;
  const uint64_t sign_bits = v.sign ? f.sign_mask() : 0;

  int E = v.exp + msb_index(v.sig);  // exponent of the leading bit
  const bool subnormal_range = E < f.emin();
  const int ulp_exp = (subnormal_range ? f.emin() : E) - M;
  const int shift = ulp_exp - v.exp;  // significand bits below the ULP

  u128 kept;
  if (shift <= 0) {
    kept = v.sig << -shift;  // fits: the leading bit lands at or below bit M
  } else if (shift < 128) {
    kept = v.sig >> shift;
  } else {
    kept = 0;
  }
  const bool below_ulp = any_bits_below(v.sig, shift) || v.sticky;

  bool up = false;
  switch (ctl.mode) {
    case RoundingMode::nearest_even:
    case RoundingMode::nearest_away: {
      const bool half_bit = shift >= 1 && bit_field(v.sig, shift - 1, 1) != 0;
      const bool rest = any_bits_below(v.sig, shift - 1) || v.sticky;
      if (half_bit && rest) {
        up = true;
      } else if (half_bit) {  // exactly halfway
        up = ctl.mode == RoundingMode::nearest_away || (kept & 1u) != 0;
      }
      break;
    }
    case RoundingMode::toward_zero: break;
    case RoundingMode::toward_positive: up = below_ulp && !v.sign; break;
    case RoundingMode::toward_negative: up = below_ulp && v.sign; break;
    case RoundingMode::stochastic: {
      if (rng == nullptr) internal_error("stochastic rounding without random-number resources");
      const int n = ctl.stochastic_bits;
      uint64_t top = bit_field(v.sig, shift - n, n);  // N most significant lower bits 2957.1
      if (ctl.stochastic_or_lower && (any_bits_below(v.sig, shift - n) || v.sticky)) top |= 1u;
      const uint64_t r = rng->next_bits(ctl.rng, n);
      up = ((top + r) >> n) != 0;  // carry out of the N-bit adder 2922
      break;
    }
  }
  kept += up ? 1u : 0u;

  uint64_t bits;
  if (!subnormal_range) {
    if (kept >> (M + 1)) {  // the increment carried out of the mantissa
      kept >>= 1;
      ++E;
    }
    if (E > f.emax()) return overflow_result(f, v.sign, ctl);
    bits = sign_bits | (static_cast<uint64_t>(E + f.bias()) << M) |
           (static_cast<uint64_t>(kept) & f.man_mask());
  } else {
    bits = sign_bits | static_cast<uint64_t>(kept);  // kept == 2^M encodes the min normal
  }

  return apply_underflow(bits, f, ctl);
}

uint64_t apply_underflow(uint64_t bits, const FloatFormat& f, const FpControl& ctl) {
  const uint64_t sign_bits = bits & f.sign_mask();
  const uint64_t magnitude = bits & ~f.sign_mask();
  bool underflow = magnitude == 0;
  if (magnitude != 0 && magnitude < f.min_normal()) {  // a subnormal result
    if (ctl.subnormals == Subnormals::flush_to_zero) {
      bits = sign_bits;
      underflow = true;
    } else if (ctl.subnormals == Subnormals::flush_to_min_normal) {
      bits = sign_bits | f.min_normal();
    }
  }
  if (underflow && ctl.min_sat) {
    bits = sign_bits | (ctl.subnormals == Subnormals::keep ? uint64_t{1} : f.min_normal());
  }
  return bits;
}

uint64_t convert_nan(uint64_t bits, const FloatFormat& from, const FloatFormat& to) {
  const uint64_t sign = (bits & from.sign_mask()) ? to.sign_mask() : 0;
  uint64_t payload = bits & from.man_mask();
  if (to.man_bits >= from.man_bits) {
    payload <<= (to.man_bits - from.man_bits);
  } else {
    payload >>= (from.man_bits - to.man_bits);
  }
  if (payload == 0) payload = 1;
  return sign | to.exp_mask() | payload;
}

}  // namespace wafersim::numerics
