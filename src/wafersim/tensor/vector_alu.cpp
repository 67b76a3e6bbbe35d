#include "wafersim/tensor/vector_alu.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "wafersim/errors.hpp"

namespace wafersim::tensor {

namespace {

using isa::AluKind;
using isa::RegFile;

constexpr uint32_t kCanonicalNan = 0x7FC00000u;

uint32_t mask_of(int bits) { return bits == 32 ? 0xFFFFFFFFu : ((1u << bits) - 1u); }

// Sign-extends a `bits`-wide value held in the low bits of v.
int64_t sx(uint32_t v, int bits) {
  if (bits == 32) return static_cast<int32_t>(v);
  const int64_t x = v & mask_of(bits);
  return (x & (int64_t{1} << (bits - 1))) ? x - (int64_t{1} << bits) : x;
}

bool is_snan(float f) {
  const uint32_t b = std::bit_cast<uint32_t>(f);
  return (b & 0x7F800000u) == 0x7F800000u && (b & 0x007FFFFFu) != 0 && !(b & 0x00400000u);
}

// IEEE binary32 result with its status, computed exactly where it matters: the product of
// two floats is exact in double; the error of a float sum comes from TwoSum.
uint32_t fp_result(float r, bool exact, bool any_snan, bool inputs_nan, bool inputs_finite,
                   double exact_mag, FpStatus& st) {
  if (std::isnan(r)) {
    if (any_snan || !inputs_nan) st.invalid = true;
    return kCanonicalNan;
  }
  if (any_snan) st.invalid = true;
  if (std::isinf(r) && inputs_finite) {
    st.overflow = true;
    st.inexact = true;
    return std::bit_cast<uint32_t>(r);
  }
  if (!exact) {
    st.inexact = true;
    if (exact_mag < static_cast<double>(std::numeric_limits<float>::min())) st.underflow = true;
  }
  return std::bit_cast<uint32_t>(r);
}

uint32_t fadd(float a, float b, FpStatus& st) {
  const float s = a + b;
  bool exact = true;
  if (std::isfinite(s)) {  // TwoSum: the rounding error of a + b, exactly
    const float bb = s - a;
    const float err = (a - (s - bb)) + (b - bb);
    exact = err == 0.0f;
  }
  // A rounded sum is never tiny unless exact (sums of floats below min normal are exact).
  return fp_result(s, exact, is_snan(a) || is_snan(b), std::isnan(a) || std::isnan(b),
                   std::isfinite(a) && std::isfinite(b), std::fabs(static_cast<double>(s)), st);
}

uint32_t fmul(float a, float b, FpStatus& st) {
  const float p = a * b;
  const double e = static_cast<double>(a) * static_cast<double>(b);  // exact
  const bool exact = !std::isfinite(p) || static_cast<double>(p) == e;
  return fp_result(p, exact, is_snan(a) || is_snan(b), std::isnan(a) || std::isnan(b),
                   std::isfinite(a) && std::isfinite(b), std::fabs(e), st);
}

float as_f(uint32_t v) { return std::bit_cast<float>(v); }
uint32_t as_u(float f) { return std::bit_cast<uint32_t>(f); }

}  // namespace

int32_t quantize(int64_t x, const QuantParams& q, bool to_unsigned, bool relu) {
  if (relu && x < 0) x = 0;
  int64_t p = x * q.scale;
  if (q.shift > 0) p = (p + (int64_t{1} << (q.shift - 1))) >> q.shift;  // floor shift: half up
  p += q.zero_point;
  const int64_t lo = to_unsigned ? 0 : -128;
  const int64_t hi = to_unsigned ? 255 : 127;
  return static_cast<int32_t>(std::clamp(p, lo, hi));
}

void execute_alu(const AluSlot& a, VectorState& s) {
  if (a.kind == AluKind::nop) return;
  const int lanes = s.lanes();
  const int bits = a.bits();
  const uint32_t m = mask_of(bits);
  const bool fp = a.is_fp();
  const RegFile file = VectorRegFile::file_for_size(a.size_code);
  const bool src2_imm = a.imm_valid && (a.info->imm == isa::ImmMode::optional_ ||
                                        a.info->imm == isa::ImmMode::mask);
  VectorRegFile& r = s.regs;
  const std::vector<uint8_t>& m0 = s.masks[0];

  auto active = [&](int lane) { return !a.predicate || m0[lane] != 0; };
  auto src1 = [&](int lane) { return r.read(file, a.rs1, lane); };
  auto src2 = [&](int lane) { return src2_imm ? (a.imm & m) : r.read(file, a.rs2, lane); };

  // Lane-wise result written to rd (the common case).
  auto each = [&](auto&& f) {
    for (int lane = 0; lane < lanes; ++lane) {
      if (active(lane)) r.write(file, a.rd, lane, f(lane));
    }
  };

  switch (a.kind) {
    case AluKind::nop:
      return;
    case AluKind::add_s:
    case AluKind::add_u:
    case AluKind::sub_s:
    case AluKind::sub_u: {
      const bool sub = a.kind == AluKind::sub_s || a.kind == AluKind::sub_u;
      const bool sgn = a.kind == AluKind::add_s || a.kind == AluKind::sub_s;
      for (int lane = 0; lane < lanes; ++lane) {
        if (!active(lane)) continue;
        const uint32_t x = src1(lane), y = src2(lane);
        const uint32_t res = (sub ? x - y : x + y) & m;
        bool flag;
        if (sgn) {
          const int64_t e = sub ? sx(x, bits) - sx(y, bits) : sx(x, bits) + sx(y, bits);
          flag = e != sx(res, bits);  // signed overflow
        } else {
          flag = sub ? x < y : (uint64_t{x} + y) > m;  // borrow / carry-out
        }
        s.carry[lane] = flag;
        r.write(file, a.rd, lane, res);
      }
      return;
    }
    case AluKind::mul:
      each([&](int l) { return static_cast<uint32_t>(uint64_t{src1(l)} * src2(l)) & m; });
      return;
    case AluKind::fadd:
      each([&](int l) { return fadd(as_f(src1(l)), as_f(src2(l)), s.fp); });
      return;
    case AluKind::fsub:
      each([&](int l) { return fadd(as_f(src1(l)), -as_f(src2(l)), s.fp); });
      return;
    case AluKind::fmul:
      each([&](int l) { return fmul(as_f(src1(l)), as_f(src2(l)), s.fp); });
      return;
    case AluKind::abs:
      each([&](int l) {
        const uint32_t x = src1(l);
        if (fp) return x & 0x7FFFFFFFu;
        const int64_t v = sx(x, bits);
        return static_cast<uint32_t>(v < 0 ? -v : v) & m;  // INT_MIN wraps to itself
      });
      return;
    case AluKind::and_: each([&](int l) { return src1(l) & src2(l); }); return;
    case AluKind::or_: each([&](int l) { return src1(l) | src2(l); }); return;
    case AluKind::xor_: each([&](int l) { return src1(l) ^ src2(l); }); return;
    case AluKind::not_: each([&](int l) { return ~src1(l) & m; }); return;
    case AluKind::shl: each([&](int l) { return (src1(l) << a.imm) & m; }); return;
    case AluKind::shr_u: each([&](int l) { return src1(l) >> a.imm; }); return;
    case AluKind::shr_s:
      each([&](int l) { return static_cast<uint32_t>(sx(src1(l), bits) >> a.imm) & m; });
      return;
    case AluKind::mov: each([&](int l) { return src1(l); }); return;
    case AluKind::movi: each([&](int) { return a.imm & m; }); return;
    case AluKind::movc: each([&](int l) { return uint32_t{s.carry[l]}; }); return;
    case AluKind::cmpeq:
    case AluKind::cmpne:
    case AluKind::cmplt_s:
    case AluKind::cmplt_u:
    case AluKind::cmple_s:
    case AluKind::cmple_u: {
      std::vector<uint8_t>& dst = s.masks[a.rd];
      for (int lane = 0; lane < lanes; ++lane) {
        if (!active(lane)) continue;
        const uint32_t x = src1(lane), y = src2(lane);
        bool res;
        if (fp) {
          const float fx = as_f(x), fy = as_f(y);  // NaN compares false (unordered)
          switch (a.kind) {
            case AluKind::cmpeq: res = fx == fy; break;
            case AluKind::cmpne: res = !(fx == fy); break;
            case AluKind::cmplt_s: res = fx < fy; break;
            default: res = fx <= fy; break;
          }
        } else {
          switch (a.kind) {
            case AluKind::cmpeq: res = x == y; break;
            case AluKind::cmpne: res = x != y; break;
            case AluKind::cmplt_s: res = sx(x, bits) < sx(y, bits); break;
            case AluKind::cmplt_u: res = x < y; break;
            case AluKind::cmple_s: res = sx(x, bits) <= sx(y, bits); break;
            default: res = x <= y; break;
          }
        }
        dst[lane] = res;
      }
      return;
    }
    case AluKind::sel: {
      const std::vector<uint8_t>& sel = s.masks[a.rs3];
      each([&](int l) { return sel[l] ? src1(l) : r.read(file, a.rs2, l); });
      return;
    }
    case AluKind::mad:
      each([&](int l) {
        const uint32_t x = src1(l), y = r.read(file, a.rs2, l), z = r.read(file, a.rs3, l);
        if (!fp) return static_cast<uint32_t>(uint64_t{x} * y + z) & m;
        const float fx = as_f(x), fy = as_f(y), fz = as_f(z);
        const float res = std::fma(fx, fy, fz);  // one rounding
        if (is_snan(fx) || is_snan(fy) || is_snan(fz)) s.fp.invalid = true;
        if (std::isnan(res)) {
          if (!(std::isnan(fx) || std::isnan(fy) || std::isnan(fz))) s.fp.invalid = true;
          return kCanonicalNan;
        }
        if (std::isinf(res) && std::isfinite(fx) && std::isfinite(fy) && std::isfinite(fz)) {
          s.fp.overflow = s.fp.inexact = true;
        }
        return as_u(res);
      });
      return;
    case AluKind::relu:
      each([&](int l) {
        const uint32_t x = src1(l);
        if (fp) {
          const float f = as_f(x);
          if (std::isnan(f)) return is_snan(f) ? (s.fp.invalid = true, kCanonicalNan) : kCanonicalNan;
          return f < 0.0f ? 0u : x;
        }
        return sx(x, bits) < 0 ? 0u : x;
      });
      return;
    case AluKind::sigm:
      each([&](int l) {
        const float f = as_f(src1(l));
        if (std::isnan(f)) {
          if (is_snan(f)) s.fp.invalid = true;
          return kCanonicalNan;
        }
        const double y = 1.0 / (1.0 + std::exp(-static_cast<double>(f)));
        return as_u(static_cast<float>(y));
      });
      return;
    case AluKind::qnt_s8:
    case AluKind::qnt_u8:
    case AluKind::reluq_s8:
    case AluKind::reluq_u8: {
      const QuantParams q = quant_params(a.imm);
      const bool to_u = a.kind == AluKind::qnt_u8 || a.kind == AluKind::reluq_u8;
      const bool relu = a.kind == AluKind::reluq_s8 || a.kind == AluKind::reluq_u8;
      for (int lane = 0; lane < lanes; ++lane) {
        if (!active(lane)) continue;
        const int32_t y = quantize(sx(src1(lane), bits), q, to_u, relu);
        r.write(RegFile::RB, a.rd, lane, static_cast<uint32_t>(y));
      }
      return;
    }
  }
  internal_error("execute_alu: unhandled ALU kind");
}

}  // namespace wafersim::tensor
