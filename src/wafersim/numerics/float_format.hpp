// Binary floating-point formats as (exponent bits, mantissa bits): the IEEE layouts the
// emulator rounds to and from.
#pragma once

#include <cstdint>

namespace wafersim::numerics {

struct FloatFormat {
  int exp_bits;
  int man_bits;  // stored fraction bits, without the hidden one

  constexpr int bias() const { return (1 << (exp_bits - 1)) - 1; }
  constexpr int emin() const { return 1 - bias(); }  // exponent of the smallest normal
  constexpr int emax() const { return bias(); }      // exponent of the largest normal
  constexpr int width() const { return 1 + exp_bits + man_bits; }
  constexpr uint64_t sign_mask() const { return uint64_t{1} << (exp_bits + man_bits); }
  constexpr uint64_t exp_mask() const { return ((uint64_t{1} << exp_bits) - 1) << man_bits; }
  constexpr uint64_t man_mask() const { return (uint64_t{1} << man_bits) - 1; }
  constexpr uint64_t inf_bits() const { return exp_mask(); }
  constexpr uint64_t quiet_bit() const { return uint64_t{1} << (man_bits - 1); }
  constexpr uint64_t default_nan() const { return exp_mask() | quiet_bit(); }
  constexpr uint64_t max_normal() const { return exp_mask() - (uint64_t{1} << man_bits) + man_mask(); }
  constexpr uint64_t min_normal() const { return uint64_t{1} << man_bits; }
};

inline constexpr FloatFormat kFp16{5, 10};
inline constexpr FloatFormat kBf16{8, 7};
inline constexpr FloatFormat kFp32{8, 23};
inline constexpr FloatFormat kFp64{11, 52};

inline constexpr bool is_nan(uint64_t bits, const FloatFormat& f) {
  return (bits & f.exp_mask()) == f.exp_mask() && (bits & f.man_mask()) != 0;
}
inline constexpr bool is_inf(uint64_t bits, const FloatFormat& f) {
  return (bits & ~f.sign_mask()) == f.inf_bits();
}
inline constexpr bool is_zero(uint64_t bits, const FloatFormat& f) {
  return (bits & ~f.sign_mask()) == 0;
}

}  // namespace wafersim::numerics
