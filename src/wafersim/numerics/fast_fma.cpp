#include "wafersim/numerics/fast_fma.hpp"

#include <cmath>

#include "wafersim/errors.hpp"
#include "wafersim/numerics/convert.hpp"
#include "wafersim/numerics/fp_arith.hpp"
#include "wafersim/numerics/round_to_odd.hpp"
#include "wafersim/numerics/rounding.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define WAFERSIM_F16C_BUILD 1
#endif

namespace wafersim::numerics {

namespace {

// Stochastic rounding reads the N bits just below the ULP. The sum rounded to odd holds
// them exactly, followed by the sticky bit, when N <= 12 for fp16 (24-bit float: the ULP
// sits 13 bits above its last bit) and N <= 28 for fp32 (53-bit double: 29 bits). Larger N
// go to the reference.
constexpr int kMaxStochasticBits16 = 12;
constexpr int kMaxStochasticBits32 = 28;

bool is_fp16(const FloatFormat& f) { return f.exp_bits == 5 && f.man_bits == 10; }
bool is_fp32(const FloatFormat& f) { return f.exp_bits == 8 && f.man_bits == 23; }

// The fast paths take finite operands only: infinities and NaNs go to the reference.
bool any_inf_nan16(uint16_t a, uint16_t b, uint16_t c) {
  constexpr uint16_t e = 0x7C00;
  return (a & e) == e || (b & e) == e || (c & e) == e;
}

// fp32 also sends subnormal operands to the reference: converting them to double is a
// host operation that a flush-denormals setting of the host (DAZ) would turn into zero.
bool any_inf_nan_subnormal32(uint32_t a, uint32_t b, uint32_t c) {
  constexpr uint32_t e = 0x7F800000u;
  const auto odd_one = [](uint32_t x) {
    const uint32_t ex = x & e;
    return ex == e || (ex == 0 && (x & 0x7FFFFFu) != 0);
  };
  return odd_one(a) || odd_one(b) || odd_one(c);
}

// An exact zero sum, as the reference signs it: zeros of one sign keep it, anything else
// is the cancellation zero of the mode (-0 toward negative, +0 otherwise) [IEEE 754 6.3].
uint64_t zero_sum(bool p_neg, bool z_neg, const FloatFormat& f, RoundingMode mode) {
  const bool neg = mode == RoundingMode::toward_negative ? (p_neg || z_neg) : (p_neg && z_neg);
  return neg ? f.sign_mask() : 0;
}

// The FP control flags the reference applies after rounding (rounding.cpp), for a nonzero
// finite value the host rounded to `bits` in an IEEE mode: Max Sat turns an overflow to
// infinity into the largest finite value; subnormal results are flushed as asked, and Min
// Sat keeps a result that vanished away from zero.
uint64_t apply_flags(uint64_t bits, const FloatFormat& f, const FpControl& ctl) {
  const uint64_t sign_bits = bits & f.sign_mask();
  const uint64_t magnitude = bits & ~f.sign_mask();
  if (magnitude == f.inf_bits()) return ctl.max_sat ? (sign_bits | f.max_normal()) : bits;
  return apply_underflow(bits, f, ctl);
}

// The two fp16 builds differ only in how they widen the operands and which rounding modes
// the host rounds for them.
struct Portable {
  static void widen(uint16_t a, uint16_t b, uint16_t c, float& x, float& y, float& z) {
    x = fp16_to_fp32(a);
    y = fp16_to_fp32(b);
    z = fp16_to_fp32(c);
  }
  static bool rounds(RoundingMode m) { return m == RoundingMode::nearest_even; }
  static uint16_t narrow(float x, RoundingMode) { return fp32_to_fp16_rne(x); }
};

#ifdef WAFERSIM_F16C_BUILD
struct F16c {
  [[gnu::target("f16c")]] static void widen(uint16_t a, uint16_t b, uint16_t c, float& x,
                                            float& y, float& z) {
    const __m128 v = _mm_cvtph_ps(_mm_setr_epi16(static_cast<short>(a), static_cast<short>(b),
                                                  static_cast<short>(c), 0, 0, 0, 0, 0));
    x = _mm_cvtss_f32(v);
    y = _mm_cvtss_f32(_mm_shuffle_ps(v, v, 1));
    z = _mm_cvtss_f32(_mm_shuffle_ps(v, v, 2));
  }
  // The four IEEE modes the conversion takes as an immediate; ties away from zero has none.
  static bool rounds(RoundingMode m) {
    return m == RoundingMode::nearest_even || m == RoundingMode::toward_zero ||
           m == RoundingMode::toward_positive || m == RoundingMode::toward_negative;
  }
  [[gnu::target("f16c")]] static uint16_t narrow(float x, RoundingMode m) {
    const __m128 v = _mm_set_ss(x);
    __m128i h;
    switch (m) {
      case RoundingMode::toward_zero: h = _mm_cvtps_ph(v, _MM_FROUND_TO_ZERO); break;
      case RoundingMode::toward_positive: h = _mm_cvtps_ph(v, _MM_FROUND_TO_POS_INF); break;
      case RoundingMode::toward_negative: h = _mm_cvtps_ph(v, _MM_FROUND_TO_NEG_INF); break;
      default: h = _mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT); break;
    }
    return static_cast<uint16_t>(_mm_cvtsi128_si32(h));
  }
};
#endif

// fp16 a * b + c. The product of two fp16 values is exact in float (22 significant bits,
// magnitude 2^-48 .. 2^32) and so is every nonzero sum's distance from zero (>= 2^-48, no
// float subnormals anywhere); float's 24 bits meet 24 >= 2 * 11 + 2 for the rounding to odd.
template <class Build>
[[gnu::always_inline]] inline uint16_t fma16_body(uint16_t a, uint16_t b, uint16_t c,
                                                  const FpControl& ctl, LfsrBank* rng) {
  if (any_inf_nan16(a, b, c) || (ctl.mode == RoundingMode::stochastic &&
                                 ctl.stochastic_bits > kMaxStochasticBits16)) {
    return static_cast<uint16_t>(fma_bits(a, b, c, kFp16, ctl, rng));
  }
  float x, y, z;
  Build::widen(a, b, c, x, y, z);
  const float p = x * y;
  const float s = p + z;
  if (s == 0.0f) {  // only an exact zero: a nonzero sum is at least 2^-48
    return static_cast<uint16_t>(zero_sum(std::signbit(p), std::signbit(z), kFp16, ctl.mode));
  }
  const float odd = sum_to_odd(p, z, s);
  if (Build::rounds(ctl.mode)) {
    return static_cast<uint16_t>(apply_flags(Build::narrow(odd, ctl.mode), kFp16, ctl));
  }
  return static_cast<uint16_t>(round_to_format(wide_of_normal(odd), kFp16, ctl, rng));
}

uint16_t fma16_portable(uint16_t a, uint16_t b, uint16_t c, const FpControl& ctl,
                        LfsrBank* rng) {
  return fma16_body<Portable>(a, b, c, ctl, rng);
}

#ifdef WAFERSIM_F16C_BUILD
[[gnu::target("f16c")]] uint16_t fma16_f16c(uint16_t a, uint16_t b, uint16_t c,
                                            const FpControl& ctl, LfsrBank* rng) {
  return fma16_body<F16c>(a, b, c, ctl, rng);
}

bool detect_f16c() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("f16c");
}
#else
bool detect_f16c() { return false; }
#endif

using Fma16 = uint16_t (*)(uint16_t, uint16_t, uint16_t, const FpControl&, LfsrBank*);

// The load-time choice.
const bool kHostF16c = detect_f16c();
#ifdef WAFERSIM_F16C_BUILD
const Fma16 kLoadedFma16 = kHostF16c ? fma16_f16c : fma16_portable;
#else
const Fma16 kLoadedFma16 = fma16_portable;
#endif

}  // namespace

bool host_has_f16c() { return kHostF16c; }

Fp16Build loaded_fp16_build() { return kHostF16c ? Fp16Build::f16c : Fp16Build::portable; }

uint16_t fast_fma16(uint16_t a, uint16_t b, uint16_t c, const FpControl& ctl, LfsrBank* rng,
                    Fp16Build build) {
  switch (build) {
    case Fp16Build::automatic: break;
    case Fp16Build::portable: return fma16_portable(a, b, c, ctl, rng);
    case Fp16Build::f16c:
#ifdef WAFERSIM_F16C_BUILD
      if (kHostF16c) return fma16_f16c(a, b, c, ctl, rng);
#endif
      throw ConfigError("the F16C build of the fp16 fast path needs a CPU with F16C");
  }
  return kLoadedFma16(a, b, c, ctl, rng);
}

// fp32 a * b + c. The product of two normal fp32 values is exact in double (48 bits,
// magnitude 2^-252 .. 2^256) and a nonzero sum is at least 2^-252; double's 53 bits meet
// 53 >= 2 * 24 + 2. Round to nearest even converts in hardware when the result is a
// normal fp32 number; the other modes and subnormal results round in integer code.
uint32_t fast_fma32(uint32_t a, uint32_t b, uint32_t c, const FpControl& ctl, LfsrBank* rng) {
  if (any_inf_nan_subnormal32(a, b, c) ||
      (ctl.mode == RoundingMode::stochastic && ctl.stochastic_bits > kMaxStochasticBits32))
      [[unlikely]] {
    return static_cast<uint32_t>(fma_bits(a, b, c, kFp32, ctl, rng));
  }
  const double x = bits_float(a), y = bits_float(b), z = bits_float(c);
  const double p = x * y;
  const double s = p + z;
  if (s == 0.0) {
    return static_cast<uint32_t>(zero_sum(std::signbit(p), std::signbit(z), kFp32, ctl.mode));
  }
  const double odd = sum_to_odd(p, z, s);
  if (ctl.mode == RoundingMode::nearest_even && std::fabs(odd) >= 0x1p-126) {
    const uint32_t r = float_bits(static_cast<float>(odd));
    // No flag applies under the default control: skipping the check keeps fp32 as fast as
    // the old shortcut.
    return is_default_rne(ctl) ? r : static_cast<uint32_t>(apply_flags(r, kFp32, ctl));
  }
  return static_cast<uint32_t>(round_to_format(wide_of_normal(odd), kFp32, ctl, rng));
}

uint64_t fast_fma_bits(uint64_t a, uint64_t b, uint64_t c, const FloatFormat& f,
                       const FpControl& ctl, LfsrBank* rng) {
  if (is_fp16(f)) {
    return kLoadedFma16(static_cast<uint16_t>(a), static_cast<uint16_t>(b),
                        static_cast<uint16_t>(c), ctl, rng);
  }
  if (is_fp32(f)) {
    return fast_fma32(static_cast<uint32_t>(a), static_cast<uint32_t>(b),
                      static_cast<uint32_t>(c), ctl, rng);
  }
  return fma_bits(a, b, c, f, ctl, rng);
}

// The same compositions as the reference's (fp_arith.hpp).
uint64_t fast_mul_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                       LfsrBank* rng) {
  const FmaOperands o = mul_as_fma(a, b, f);
  return fast_fma_bits(o.x, o.y, o.z, f, ctl, rng);
}

uint64_t fast_add_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                       LfsrBank* rng) {
  const FmaOperands o = add_as_fma(a, b, f);
  return fast_fma_bits(o.x, o.y, o.z, f, ctl, rng);
}

uint64_t fast_sub_bits(uint64_t a, uint64_t b, const FloatFormat& f, const FpControl& ctl,
                       LfsrBank* rng) {
  const FmaOperands o = sub_as_fma(a, b, f);
  return fast_fma_bits(o.x, o.y, o.z, f, ctl, rng);
}

}  // namespace wafersim::numerics
