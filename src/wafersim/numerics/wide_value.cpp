#include "wafersim/numerics/wide_value.hpp"

#include <utility>

#include "wafersim/errors.hpp"

namespace wafersim::numerics {

int msb_index(u128 x) {
  const uint64_t hi = static_cast<uint64_t>(x >> 64);
  if (hi) return 127 - __builtin_clzll(hi);
  return 63 - __builtin_clzll(static_cast<uint64_t>(x));
}

FloatClass decode(uint64_t bits, const FloatFormat& f, WideValue& out) {
  out = WideValue{};
  out.sign = (bits & f.sign_mask()) != 0;
  const uint64_t e = (bits & f.exp_mask()) >> f.man_bits;
  const uint64_t m = bits & f.man_mask();
  if (e == (f.exp_mask() >> f.man_bits)) return m ? FloatClass::nan : FloatClass::infinite;
  if (e == 0) {
    if (m == 0) return FloatClass::zero;
    out.sig = m;
    out.exp = f.emin() - f.man_bits;
    return FloatClass::finite;
  }
  out.sig = m | (uint64_t{1} << f.man_bits);
  out.exp = static_cast<int>(e) - f.bias() - f.man_bits;
  return FloatClass::finite;
}

WideValue multiply(const WideValue& a, const WideValue& b) {
  WideValue r;
  r.sign = a.sign != b.sign;
  r.sig = a.sig * b.sig;
  r.exp = a.exp + b.exp;
  return r;
}

WideValue add(const WideValue& a_in, const WideValue& b_in) {
  if (a_in.sticky || b_in.sticky) internal_error("numerics::add takes exact operands only");
  if (a_in.sig == 0) return b_in;
  if (b_in.sig == 0) return a_in;
  // a: the operand whose leading bit is higher; it is moved so that bit sits at 125, which
  // leaves room for the carry of the sum.
  WideValue a = a_in, b = b_in;
  if (a.exp + msb_index(a.sig) < b.exp + msb_index(b.sig)) std::swap(a, b);
  const int lift = 125 - msb_index(a.sig);
  a.sig <<= lift;
  a.exp -= lift;
  bool sticky = false;
  const int shift = b.exp - a.exp;  // >= -inf; b's leading bit is at most at 125
  if (shift >= 0) {
    b.sig <<= shift;
  } else if (shift > -128) {
    const u128 lost = b.sig & ((u128{1} << -shift) - 1);
    sticky = lost != 0;
    b.sig >>= -shift;
  } else {
    sticky = true;
    b.sig = 0;
  }
  WideValue r;
  r.exp = a.exp;
  if (a.sign == b.sign) {
    r.sign = a.sign;
    r.sig = a.sig + b.sig;
    r.sticky = sticky;
  } else if (a.sig > b.sig || (a.sig == b.sig && sticky)) {
    // a - (b + eps) with 0 < eps < 1 ulp equals (a - b - 1) + (1 - eps).
    r.sign = a.sign;
    r.sig = a.sig - b.sig - (sticky ? 1 : 0);
    r.sticky = sticky;
  } else if (a.sig == b.sig) {
    r.sig = 0;  // exact cancellation
  } else {
    r.sign = b.sign;  // only possible without sticky: both aligned exactly
    r.sig = b.sig - a.sig;
  }
  return r;
}

}  // namespace wafersim::numerics
