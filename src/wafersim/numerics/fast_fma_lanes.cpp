#include "wafersim/numerics/fast_fma_lanes.hpp"

#include <cstring>

#include "wafersim/errors.hpp"
#include "wafersim/numerics/fast_fma.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define WAFERSIM_LANE_SIMD_BUILD 1
#endif

namespace wafersim::numerics {

namespace {

// The vector code rounds in the four IEEE modes the conversions offer, under flags that
// change nothing after rounding; everything else goes lane by lane.
bool vector_rounds(const FpControl& ctl) {
  const bool mode = ctl.mode == RoundingMode::nearest_even ||
                    ctl.mode == RoundingMode::toward_zero ||
                    ctl.mode == RoundingMode::toward_positive ||
                    ctl.mode == RoundingMode::toward_negative;
  return mode && ctl.subnormals == Subnormals::keep && !ctl.max_sat && !ctl.min_sat;
}

void fma16_one_by_one(const uint16_t* a, const uint16_t* b, const uint16_t* c, uint16_t* out,
                      size_t n, const FpControl& ctl, LfsrBank* rng) {
  for (size_t k = 0; k < n; ++k) out[k] = fast_fma16(a[k], b[k], c[k], ctl, rng);
}

void fma32_one_by_one(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* out,
                      size_t n, const FpControl& ctl, LfsrBank* rng) {
  for (size_t k = 0; k < n; ++k) out[k] = fast_fma32(a[k], b[k], c[k], ctl, rng);
}

#ifdef WAFERSIM_LANE_SIMD_BUILD

// ---- fp16: 8 lanes in float ------------------------------------------------------------

// Lanes with an infinite or NaN operand, as a bit mask (the scalar path sends them to the
// reference).
[[gnu::target("avx2,f16c")]] inline int special16(__m128i a, __m128i b, __m128i c) {
  const __m128i e = _mm_set1_epi16(0x7C00);
  const __m128i s = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi16(_mm_and_si128(a, e), e), _mm_cmpeq_epi16(_mm_and_si128(b, e), e)),
      _mm_cmpeq_epi16(_mm_and_si128(c, e), e));
  return _mm_movemask_epi8(_mm_packs_epi16(s, _mm_setzero_si128()));
}

// 8 lanes of fma16_body (fast_fma.cpp) with F16C rounding mode `kImm`. Returns the lanes
// the scalar path must redo.
template <int kImm, bool kDown>
[[gnu::target("avx2,f16c")]] int fma16x8(const uint16_t* a, const uint16_t* b, const uint16_t* c,
                                         uint16_t* out) {
  const __m128i ha = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i hb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
  const __m128i hc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c));
  const __m256 x = _mm256_cvtph_ps(ha), y = _mm256_cvtph_ps(hb), z = _mm256_cvtph_ps(hc);
  const __m256 p = _mm256_mul_ps(x, y);  // exact
  const __m256 s = _mm256_add_ps(p, z);
  // sum_to_odd (round_to_odd.hpp), lane-wise.
  const __m256 bv = _mm256_sub_ps(s, p);
  const __m256 err = _mm256_add_ps(_mm256_sub_ps(p, _mm256_sub_ps(s, bv)), _mm256_sub_ps(z, bv));
  const __m256i sb = _mm256_castps_si256(s);
  const __m256i below = _mm256_srai_epi32(_mm256_xor_si256(_mm256_castps_si256(err), sb), 31);
  const __m256i odd_bits = _mm256_or_si256(_mm256_add_epi32(sb, below), _mm256_set1_epi32(1));
  const __m256 inexact = _mm256_cmp_ps(err, _mm256_setzero_ps(), _CMP_NEQ_OQ);
  __m256 odd = _mm256_blendv_ps(s, _mm256_castsi256_ps(odd_bits), inexact);
  if constexpr (kDown) {
    // An exact zero sum is -0 toward negative unless both addends are +0 (zero_sum); the
    // host's round-to-nearest sum already signs it right in the other modes.
    const __m256 zero = _mm256_cmp_ps(s, _mm256_setzero_ps(), _CMP_EQ_OQ);
    const __m256 neg = _mm256_and_ps(_mm256_or_ps(p, z), _mm256_set1_ps(-0.0f));
    odd = _mm256_blendv_ps(odd, neg, zero);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtps_ph(odd, kImm));
  return special16(ha, hb, hc);
}

using Fma16x8 = int (*)(const uint16_t*, const uint16_t*, const uint16_t*, uint16_t*);

Fma16x8 fma16x8_for(RoundingMode m) {
  switch (m) {
    case RoundingMode::toward_zero: return fma16x8<_MM_FROUND_TO_ZERO, false>;
    case RoundingMode::toward_positive: return fma16x8<_MM_FROUND_TO_POS_INF, false>;
    case RoundingMode::toward_negative: return fma16x8<_MM_FROUND_TO_NEG_INF, true>;
    default: return fma16x8<_MM_FROUND_TO_NEAREST_INT, false>;
  }
}

// ---- fp32: 4 lanes in double -----------------------------------------------------------

// Lanes with an infinite, NaN or subnormal operand (fast_fma32 sends them to the reference).
[[gnu::target("avx2")]] inline __m128i special32(__m128i v) {
  const __m128i e = _mm_set1_epi32(0x7F800000);
  const __m128i ex = _mm_and_si128(v, e);
  const __m128i man_zero = _mm_cmpeq_epi32(_mm_and_si128(v, _mm_set1_epi32(0x7FFFFF)),
                                           _mm_setzero_si128());
  const __m128i subnormal = _mm_andnot_si128(man_zero, _mm_cmpeq_epi32(ex, _mm_setzero_si128()));
  return _mm_or_si128(_mm_cmpeq_epi32(ex, e), subnormal);
}

// 4 lanes of fast_fma32. Round to nearest even converts in hardware as the scalar path
// does; the directed modes keep the 24 leading bits of the value rounded to odd (exact in
// float) and step one float ULP away from zero when bits were cut and the mode rounds
// that way. Lanes whose result is not a normal float (or overflows in a directed mode)
// go back to the scalar path, which rounds them in integer code.
template <RoundingMode kMode>
[[gnu::target("avx2")]] int fma32x4(const uint32_t* a, const uint32_t* b, const uint32_t* c,
                                    uint32_t* out) {
  const __m128i ia = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i ib = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
  const __m128i ic = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c));
  const __m128i special = _mm_or_si128(_mm_or_si128(special32(ia), special32(ib)), special32(ic));
  const __m256d x = _mm256_cvtps_pd(_mm_castsi128_ps(ia));
  const __m256d y = _mm256_cvtps_pd(_mm_castsi128_ps(ib));
  const __m256d z = _mm256_cvtps_pd(_mm_castsi128_ps(ic));
  const __m256d p = _mm256_mul_pd(x, y);  // exact
  const __m256d s = _mm256_add_pd(p, z);
  const __m256d bv = _mm256_sub_pd(s, p);
  const __m256d err = _mm256_add_pd(_mm256_sub_pd(p, _mm256_sub_pd(s, bv)), _mm256_sub_pd(z, bv));
  const __m256i sb = _mm256_castpd_si256(s);
  const __m256i below = _mm256_cmpgt_epi64(_mm256_setzero_si256(),
                                           _mm256_xor_si256(_mm256_castpd_si256(err), sb));
  const __m256i odd_bits = _mm256_or_si256(_mm256_add_epi64(sb, below), _mm256_set1_epi64x(1));
  const __m256d inexact = _mm256_cmp_pd(err, _mm256_setzero_pd(), _CMP_NEQ_OQ);
  __m256d odd = _mm256_blendv_pd(s, _mm256_castsi256_pd(odd_bits), inexact);
  const __m256d zero = _mm256_cmp_pd(s, _mm256_setzero_pd(), _CMP_EQ_OQ);
  if constexpr (kMode == RoundingMode::toward_negative) {
    const __m256d neg = _mm256_and_pd(_mm256_or_pd(p, z), _mm256_set1_pd(-0.0));
    odd = _mm256_blendv_pd(odd, neg, zero);
  }
  const __m256d mag = _mm256_andnot_pd(_mm256_set1_pd(-0.0), odd);
  // Nonzero results below the smallest normal float: the scalar path's integer rounding.
  __m256d redo = _mm256_andnot_pd(zero, _mm256_cmp_pd(mag, _mm256_set1_pd(0x1p-126), _CMP_LT_OQ));
  __m128i r;
  if constexpr (kMode == RoundingMode::nearest_even) {
    r = _mm_castps_si128(_mm256_cvtpd_ps(odd));
  } else {
    redo = _mm256_or_pd(redo, _mm256_cmp_pd(mag, _mm256_set1_pd(0x1p128), _CMP_GE_OQ));
    const __m256i cut = _mm256_set1_epi64x((int64_t{1} << 29) - 1);  // bits below a float ULP
    const __m256i ob = _mm256_castpd_si256(odd);
    const __m256d kept = _mm256_castsi256_pd(_mm256_andnot_si256(cut, ob));
    const __m256i exact = _mm256_cmpeq_epi64(_mm256_and_si256(ob, cut), _mm256_setzero_si256());
    __m256i step;  // all ones in lanes that round away from zero
    if constexpr (kMode == RoundingMode::toward_zero) {
      step = _mm256_setzero_si256();
    } else {
      const __m256i neg = _mm256_cmpgt_epi64(_mm256_setzero_si256(), ob);
      const __m256i away = kMode == RoundingMode::toward_positive
                               ? _mm256_xor_si256(neg, _mm256_set1_epi64x(-1))
                               : neg;
      step = _mm256_andnot_si256(exact, away);
    }
    // The low halves of the 64-bit masks, as 4 x 32 bits.
    const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m128i step32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(step, pick));
    // kept is a float exactly: the conversion does not round. Adding one to the bits is
    // the next float away from zero (past the largest finite: infinity).
    r = _mm_sub_epi32(_mm_castps_si128(_mm256_cvtpd_ps(kept)), step32);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), r);
  return _mm256_movemask_pd(redo) | _mm_movemask_ps(_mm_castsi128_ps(special));
}

using Fma32x4 = int (*)(const uint32_t*, const uint32_t*, const uint32_t*, uint32_t*);

Fma32x4 fma32x4_for(RoundingMode m) {
  switch (m) {
    case RoundingMode::toward_zero: return fma32x4<RoundingMode::toward_zero>;
    case RoundingMode::toward_positive: return fma32x4<RoundingMode::toward_positive>;
    case RoundingMode::toward_negative: return fma32x4<RoundingMode::toward_negative>;
    default: return fma32x4<RoundingMode::nearest_even>;
  }
}

// Full groups of kW lanes, then the rest padded with zeros; the lanes a group flags are
// redone by the scalar fast path (no random numbers: vector_rounds excludes stochastic).
template <int kW, typename T, typename Group, typename One>
void in_groups(const T* a, const T* b, const T* c, T* out, size_t n, Group group, One one) {
  size_t k = 0;
  for (; k + kW <= n; k += kW) {
    for (int m = group(a + k, b + k, c + k, out + k); m != 0; m &= m - 1) {
      const size_t j = k + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(m)));
      out[j] = one(a[j], b[j], c[j]);
    }
  }
  if (k == n) return;
  T ta[kW] = {}, tb[kW] = {}, tc[kW] = {}, to[kW];
  const size_t rest = n - k;
  std::memcpy(ta, a + k, rest * sizeof(T));
  std::memcpy(tb, b + k, rest * sizeof(T));
  std::memcpy(tc, c + k, rest * sizeof(T));
  const int m = group(ta, tb, tc, to);
  for (size_t j = 0; j < rest; ++j) {
    out[k + j] = ((m >> j) & 1) ? one(ta[j], tb[j], tc[j]) : to[j];
  }
}

bool detect_lane_simd() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}
#else
bool detect_lane_simd() { return false; }
#endif

const bool kHostLaneSimd = detect_lane_simd();

bool use_simd(LanesBuild build) {
  switch (build) {
    case LanesBuild::automatic: return kHostLaneSimd;
    case LanesBuild::portable: return false;
    case LanesBuild::simd:
      if (kHostLaneSimd) return true;
      throw ConfigError("the SIMD build of the lane loops needs a CPU with AVX2 and F16C");
  }
  return false;
}

}  // namespace

bool host_has_lane_simd() { return kHostLaneSimd; }

LanesBuild loaded_lanes_build() { return kHostLaneSimd ? LanesBuild::simd : LanesBuild::portable; }

void fast_fma16_lanes(const uint16_t* a, const uint16_t* b, const uint16_t* c, uint16_t* out,
                      size_t n, const FpControl& ctl, LfsrBank* rng, LanesBuild build) {
#ifdef WAFERSIM_LANE_SIMD_BUILD
  if (use_simd(build) && vector_rounds(ctl)) {
    const auto one = [&ctl](uint16_t x, uint16_t y, uint16_t z) {
      return fast_fma16(x, y, z, ctl, nullptr);
    };
    in_groups<8>(a, b, c, out, n, fma16x8_for(ctl.mode), one);
    return;
  }
#else
  (void)use_simd(build);
#endif
  fma16_one_by_one(a, b, c, out, n, ctl, rng);
}

void fast_fma32_lanes(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* out,
                      size_t n, const FpControl& ctl, LfsrBank* rng, LanesBuild build) {
#ifdef WAFERSIM_LANE_SIMD_BUILD
  if (use_simd(build) && vector_rounds(ctl)) {
    const auto one = [&ctl](uint32_t x, uint32_t y, uint32_t z) {
      return fast_fma32(x, y, z, ctl, nullptr);
    };
    in_groups<4>(a, b, c, out, n, fma32x4_for(ctl.mode), one);
    return;
  }
#else
  (void)use_simd(build);
#endif
  fma32_one_by_one(a, b, c, out, n, ctl, rng);
}

}  // namespace wafersim::numerics
