#include "wafersim/numerics/fp_arith.hpp"

#include "wafersim/numerics/rounding.hpp"
#include "wafersim/numerics/wide_value.hpp"

namespace wafersim::numerics {

namespace {

uint64_t quiet(uint64_t nan_bits, const FloatFormat& f) { return nan_bits | f.quiet_bit(); }

// Rounds an exact sum; an exact cancellation gives the mode's signed zero.
uint64_t round_sum(const WideValue& s, const FloatFormat& f, const FpControl& ctl,
                   LfsrBank* rng) {
  if (s.is_exact_zero()) return cancellation_zero(f, ctl.mode);
  return round_to_format(s, f, ctl, rng);
}

}  // namespace

uint64_t fma_bits(uint64_t a, uint64_t b, uint64_t c, const FloatFormat& f,
                  const FpControl& ctl, LfsrBank* rng) {
  WideValue va, vb, vc;
  const FloatClass ca = decode(a, f, va), cb = decode(b, f, vb), cc = decode(c, f, vc);
  if (ca == FloatClass::nan) return quiet(a, f);
  if (cb == FloatClass::nan) return quiet(b, f);
  if (cc == FloatClass::nan) return quiet(c, f);

  const bool prod_sign = va.sign != vb.sign;
  const bool a_inf = ca == FloatClass::infinite, b_inf = cb == FloatClass::infinite;
  if (a_inf || b_inf) {
    if (ca == FloatClass::zero || cb == FloatClass::zero) return f.default_nan();  // inf * 0
    if (cc == FloatClass::infinite && vc.sign != prod_sign) return f.default_nan();  // inf - inf
    return (prod_sign ? f.sign_mask() : 0) | f.inf_bits();
  }
  if (cc == FloatClass::infinite) return c;

  const bool prod_zero = ca == FloatClass::zero || cb == FloatClass::zero;
  if (prod_zero) {
    if (cc == FloatClass::zero) {  // (+-0) + (+-0)
      if (prod_sign == vc.sign) return prod_sign ? f.sign_mask() : 0;
      return cancellation_zero(f, ctl.mode);
    }
    return round_to_format(vc, f, ctl, rng);  // exact, but result flags still apply
  }
  const WideValue prod = multiply(va, vb);
  if (cc == FloatClass::zero) return round_to_format(prod, f, ctl, rng);
  return round_sum(add(prod, vc), f, ctl, rng);
}

uint64_t mul_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                  LfsrBank* rng) {
  const FmaOperands o = mul_as_fma(a, b, f);
  return fma_bits(o.x, o.y, o.z, f, ctl, rng);
}

uint64_t add_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                  LfsrBank* rng) {
  const FmaOperands o = add_as_fma(a, b, f);
  return fma_bits(o.x, o.y, o.z, f, ctl, rng);
}

uint64_t sub_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                  LfsrBank* rng) {
  const FmaOperands o = sub_as_fma(a, b, f);
  return fma_bits(o.x, o.y, o.z, f, ctl, rng);
}

}  // namespace wafersim::numerics
