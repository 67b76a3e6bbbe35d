#include "wafersim/numerics/convert.hpp"

#include "wafersim/errors.hpp"
#include "wafersim/numerics/rounding.hpp"
#include "wafersim/numerics/wide_value.hpp"

namespace wafersim::numerics {

uint64_t convert_bits(uint64_t bits, const FloatFormat& from, const FloatFormat& to,
                      const FpControl& ctl, LfsrBank* rng) {
  WideValue v;
  switch (decode(bits, from, v)) {
    case FloatClass::nan: return convert_nan(bits, from, to);
    case FloatClass::infinite: return (v.sign ? to.sign_mask() : 0) | to.inf_bits();
    case FloatClass::zero: return v.sign ? to.sign_mask() : 0;
    case FloatClass::finite: break;
  }
  return round_to_format(v, to, ctl, rng);
}

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t m = h & 0x3FFu;
  if (e == 0x1F) return bits_float(sign | 0x7F800000u | (m << 13));  // inf / NaN, payload kept
  if (e != 0) return bits_float(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0) return bits_float(sign);
  // Subnormal: normalize so the leading one becomes the hidden bit.
  int shift = __builtin_clz(m) - 21;  // leading one of a 10-bit field moved to bit 10
  m = (m << shift) & 0x3FFu;
  return bits_float(sign | (static_cast<uint32_t>(113 - shift) << 23) | (m << 13));
}

uint16_t fp32_to_fp16_rne(float x) {
  const uint32_t f = float_bits(x);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN
    if (abs == 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u);
    uint32_t payload = (abs & 0x7FFFFFu) >> 13;
    return static_cast<uint16_t>(sign | 0x7C00u | (payload ? payload : 1u));
  }
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs >= 0x38800000u) {  // normal fp16 result (>= 2^-14)
    const uint32_t mant_odd = (abs >> 13) & 1u;
    const uint32_t rounded = abs + 0xFFFu + mant_odd;  // add half - 1, plus 1 if odd: RNE
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the min subnormal
  // Subnormal fp16 result: shift the full significand down to the 2^-24 grid, RNE.
  const uint32_t e = abs >> 23;
  const uint32_t sig = (abs & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126u - e;  // 14..24 for e in 102..112
  const uint32_t kept = sig >> shift;
  const uint32_t rem = sig & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  const uint32_t up = (rem > half || (rem == half && (kept & 1u))) ? 1u : 0u;
  return static_cast<uint16_t>(sign | (kept + up));
}

uint16_t fp64_to_fp16_rne(double x) {
  const uint64_t d = double_bits(x);
  const uint16_t sign = static_cast<uint16_t>((d >> 48) & 0x8000u);
  const uint64_t abs = d & 0x7FFFFFFFFFFFFFFFull;
  if (abs >= 0x7FF0000000000000ull) {  // inf or NaN: keep the leading payload bits
    if (abs == 0x7FF0000000000000ull) return static_cast<uint16_t>(sign | 0x7C00u);
    const uint64_t payload = (abs & 0xFFFFFFFFFFFFFull) >> 42;
    return static_cast<uint16_t>(sign | 0x7C00u | (payload ? payload : 1u));
  }
  if (abs >= 0x40EFFE0000000000ull) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520
  if (abs >= 0x3F10000000000000ull) {  // normal fp16 result (>= 2^-14)
    const uint64_t odd = (abs >> 42) & 1u;
    const uint64_t rounded = abs + ((uint64_t{1} << 41) - 1u) + odd;  // RNE on bit 42
    return static_cast<uint16_t>(sign | ((rounded - (uint64_t{1008} << 52)) >> 42));
  }
  if (abs < 0x3E60000000000000ull) return sign;  // below half the smallest subnormal
  // Subnormal fp16 result: the significand on the 2^-24 grid, RNE.
  const uint64_t e = abs >> 52;
  const uint64_t sig = (abs & 0xFFFFFFFFFFFFFull) | (uint64_t{1} << 52);
  const uint64_t shift = 1051u - e;  // 43..53 for e in 998..1008
  const uint64_t kept = sig >> shift;
  const uint64_t rem = sig & ((uint64_t{1} << shift) - 1u);
  const uint64_t half = uint64_t{1} << (shift - 1u);
  const uint64_t up = (rem > half || (rem == half && (kept & 1u))) ? 1u : 0u;
  return static_cast<uint16_t>(sign | (kept + up));
}

namespace {
template <typename T>
void round_array(std::span<const T> in, std::span<uint16_t> out, const FpControl& ctl,
                 LfsrBank* rng, const FloatFormat& from) {
  if (in.size() != out.size()) internal_error("round_to_fp16: input and output sizes differ");
  validate(ctl);
  if (ctl.mode == RoundingMode::stochastic && rng == nullptr) {
    throw ConfigError("stochastic rounding needs random-number resources (rng)");
  }
  if (ctl.mode == RoundingMode::stochastic) rng->resource(ctl.rng);  // checks the index
  if constexpr (std::is_same_v<T, float>) {
    if (is_default_rne(ctl)) {
      for (size_t i = 0; i < in.size(); ++i) out[i] = fp32_to_fp16_rne(in[i]);
      return;
    }
  }
  for (size_t i = 0; i < in.size(); ++i) {
    uint64_t bits;
    if constexpr (std::is_same_v<T, float>) bits = float_bits(in[i]); else bits = double_bits(in[i]);
    out[i] = static_cast<uint16_t>(convert_bits(bits, from, kFp16, ctl, rng));
  }
}
}  // namespace

void round_to_fp16(std::span<const float> in, std::span<uint16_t> out, const FpControl& ctl,
                   LfsrBank* rng) {
  round_array(in, out, ctl, rng, kFp32);
}

void round_to_fp16(std::span<const double> in, std::span<uint16_t> out, const FpControl& ctl,
                   LfsrBank* rng) {
  round_array(in, out, ctl, rng, kFp64);
}

void fp16_to_fp32(std::span<const uint16_t> in, std::span<float> out) {
  if (in.size() != out.size()) internal_error("fp16_to_fp32: input and output sizes differ");
  for (size_t i = 0; i < in.size(); ++i) out[i] = fp16_to_fp32(in[i]);
}

}  // namespace wafersim::numerics
