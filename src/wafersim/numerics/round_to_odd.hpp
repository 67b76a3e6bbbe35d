// The exact sum of two host floats, rounded to odd: truncated toward zero to the host
// format's precision, with the last bit set when anything was cut off. Rounding that value
// once more, to a format of q bits with p >= 2q + 2 (p: the host format's precision), gives
// the correctly rounded exact sum in every rounding mode: the lowest bit stands for all the
// bits below it, so no tie, midpoint or "exact" can be faked (Boldo and Melquiond, "When
// double rounding is odd", 2005). docs/numerics.md lists where the fast paths rely on it.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "wafersim/numerics/wide_value.hpp"

namespace wafersim::numerics {

template <typename T>
using FloatBitsOf = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

// p + z rounded to odd, given s = p + z rounded to nearest (the host's default mode) and
// no overflow. TwoSum (Knuth) gives the exact error of s, whose sign says on which side of
// s the exact sum lies.
template <typename T>
T sum_to_odd(T p, T z, T s) {
  static_assert(std::is_floating_point_v<T>);
  using U = FloatBitsOf<T>;
  const T bv = s - p;
  const T err = (p - (s - bv)) + (z - bv);
  if (err == 0) return s;
  U bits = std::bit_cast<U>(s);
  constexpr U kSign = U{1} << (sizeof(T) * 8 - 1);
  if ((std::bit_cast<U>(err) ^ bits) & kSign) --bits;  // |s| > |exact|: the value below s
  return std::bit_cast<T>(static_cast<U>(bits | 1u));   // the odd one of the two neighbours
}

// The exact value of a normal host float (float or double) as a WideValue.
template <typename T>
WideValue wide_of_normal(T x) {
  using U = FloatBitsOf<T>;
  constexpr int kMan = sizeof(T) == 4 ? 23 : 52;
  constexpr int kBias = sizeof(T) == 4 ? 127 : 1023;
  const U bits = std::bit_cast<U>(x);
  WideValue v;
  v.sign = (bits >> (sizeof(T) * 8 - 1)) != 0;
  const int e = static_cast<int>((bits >> kMan) & ((U{1} << (sizeof(T) == 4 ? 8 : 11)) - 1));
  v.sig = (bits & ((U{1} << kMan) - 1)) | (U{1} << kMan);
  v.exp = e - kBias - kMan;
  return v;
}

}  // namespace wafersim::numerics
