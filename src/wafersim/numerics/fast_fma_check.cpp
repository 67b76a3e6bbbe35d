#include "wafersim/numerics/fast_fma_check.hpp"

#include <algorithm>
#include <vector>

#include "wafersim/errors.hpp"
#include "wafersim/numerics/convert.hpp"
#include "wafersim/numerics/fp_arith.hpp"
#include "wafersim/numerics/lfsr.hpp"

namespace wafersim::numerics {

namespace {

constexpr uint16_t kOne16 = 0x3C00;
constexpr uint16_t kNegZero16 = 0x8000;

// One comparison: both sides with their own, identically seeded, LFSR bank.
class Comparer {
 public:
  Comparer(const FpControl& ctl, uint64_t seed)
      : ctl_(ctl), fast_rng_(4, seed), ref_rng_(4, seed) {
    validate(ctl);
    fast_rng_.resource(ctl.rng);  // names a bad index before the loop starts
  }
  LfsrBank* fast_rng() { return &fast_rng_; }
  LfsrBank* ref_rng() { return &ref_rng_; }

  bool same_draws() {
    return ctl_.mode != RoundingMode::stochastic ||
           fast_rng_.resource(ctl_.rng).state() == ref_rng_.resource(ctl_.rng).state();
  }

  void record(uint64_t a, uint64_t b, uint64_t c, uint64_t fast, uint64_t ref) {
    record(a, b, c, fast, ref, same_draws());
  }

  // `draws_equal`: whether both sides have drawn the same bits by now.
  void record(uint64_t a, uint64_t b, uint64_t c, uint64_t fast, uint64_t ref,
              bool draws_equal) {
    ++out.checked;
    const bool same_draws = draws_equal;
    if (fast == ref && same_draws) return;
    if (out.mismatches++ == 0) {
      out.a = a;
      out.b = b;
      out.c = c;
      out.fast = fast;
      out.reference = ref;
    }
    // Keep both sides in step after a differing number of draws.
    if (!same_draws) ref_rng_.resource(ctl_.rng).set_state(fast_rng_.resource(ctl_.rng).state());
  }

  FastCheck out;

 private:
  FpControl ctl_;
  LfsrBank fast_rng_, ref_rng_;
};

// The fp16 operations of one build, composed from its fused multiply-add as the
// datapath's are; `automatic` checks the datapath's own entry points.
uint16_t fast16(CheckedOp op, uint16_t a, uint16_t b, uint16_t c, const FpControl& ctl,
                LfsrBank* rng, Fp16Build build) {
  if (build == Fp16Build::automatic) {
    switch (op) {
      case CheckedOp::add: return static_cast<uint16_t>(fast_add_bits(a, b, kFp16, ctl, rng));
      case CheckedOp::sub: return static_cast<uint16_t>(fast_sub_bits(a, b, kFp16, ctl, rng));
      case CheckedOp::mul: return static_cast<uint16_t>(fast_mul_bits(a, b, kFp16, ctl, rng));
      case CheckedOp::fma: return static_cast<uint16_t>(fast_fma_bits(a, b, c, kFp16, ctl, rng));
    }
  }
  switch (op) {
    case CheckedOp::add: return fast_fma16(a, kOne16, b, ctl, rng, build);
    case CheckedOp::sub:
      return fast_fma16(a, kOne16, is_nan(b, kFp16) ? b : (b ^ kNegZero16), ctl, rng, build);
    case CheckedOp::mul: return fast_fma16(a, b, kNegZero16, ctl, rng, build);
    case CheckedOp::fma: return fast_fma16(a, b, c, ctl, rng, build);
  }
  internal_error("check: unknown operation");
}

uint64_t reference(CheckedOp op, uint64_t a, uint64_t b, uint64_t c, const FloatFormat& f,
                   const FpControl& ctl, LfsrBank* rng) {
  switch (op) {
    case CheckedOp::add: return add_bits(a, b, f, ctl, rng);
    case CheckedOp::sub: return sub_bits(a, b, f, ctl, rng);
    case CheckedOp::mul: return mul_bits(a, b, f, ctl, rng);
    case CheckedOp::fma: return fma_bits(a, b, c, f, ctl, rng);
  }
  internal_error("check: unknown operation");
}

// splitmix64: a seeded stream of well-mixed 64-bit words.
struct Draws {
  uint64_t state;
  uint64_t next() {
    uint64_t x = (state += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
};

// One operand, weighted towards the cases where rounding is hard to get right.
uint64_t random_operand(Draws& d, const FloatFormat& f) {
  const uint64_t u = d.next();
  const uint64_t sign = (u & 1) ? f.sign_mask() : 0;
  const uint64_t man = (u >> 8) & f.man_mask();
  const uint64_t top = (uint64_t{1} << f.exp_bits) - 1;  // the inf / NaN exponent field
  const uint64_t pick = (u >> 40) & 15;
  uint64_t e;
  switch ((u >> 1) & 7) {
    case 0: case 1:  // any bit pattern
      return d.next() & ((uint64_t{1} << f.width()) - 1);
    case 2: {  // a short significand: products of two land on midpoints of the format
      const int low = f.man_bits - (f.man_bits / 2 + 1);
      e = 1 + (d.next() % (top - 1));
      return sign | (e << f.man_bits) | (man & ~((uint64_t{1} << low) - 1));
    }
    case 3:  // zeros and subnormals
      return sign | (pick < 2 ? 0 : man);
    case 4:  // the smallest and largest binades, infinities and NaNs
      e = pick < 4 ? 1 + pick : (pick < 14 ? top - 1 - (pick - 4) % 4 : top);
      return sign | (e << f.man_bits) | man;
    case 5: {  // special values
      const uint64_t one = static_cast<uint64_t>(f.bias()) << f.man_bits;
      const uint64_t values[8] = {0, f.inf_bits(), f.default_nan(), f.exp_mask() | 1,
                                  f.max_normal(), f.min_normal(), 1, one};
      return sign | values[pick & 7];
    }
    default:  // around 1, where products and sums of such operands land in range
      e = static_cast<uint64_t>(f.bias() - 8 + static_cast<int>(pick));
      return sign | (e << f.man_bits) | man;
  }
}

double to_double(uint64_t bits, const FloatFormat& f) {
  return f.man_bits == 10 ? static_cast<double>(fp16_to_fp32(static_cast<uint16_t>(bits)))
                          : static_cast<double>(bits_float(static_cast<uint32_t>(bits)));
}

// An addend far below the product (or zero), which only its sign and presence matter for:
// the case where an inexact wide sum must not hide it from the rounding.
uint64_t tiny_addend(Draws& d, uint64_t a, uint64_t b, const FloatFormat& f) {
  const auto field = [&f](uint64_t x) {
    return static_cast<int>((x & f.exp_mask()) >> f.man_bits);
  };
  const uint64_t u = d.next();
  const int top = (1 << f.exp_bits) - 1;
  const int below = f.man_bits + 3 + static_cast<int>(u % (2 * f.man_bits));
  int e = field(a) + field(b) - f.bias() - below;
  e = e < 0 ? 0 : (e > top - 1 ? top - 1 : e);
  return ((u >> 32) & 1 ? f.sign_mask() : 0) | (static_cast<uint64_t>(e) << f.man_bits) |
         ((u >> 8) & f.man_mask());
}

// An addend within a few units in the last place of -(a * b): (near-)cancellation.
uint64_t cancelling_addend(Draws& d, uint64_t a, uint64_t b, const FloatFormat& f) {
  const double p = -(to_double(a, f) * to_double(b, f));
  uint64_t c = f.man_bits == 10 ? fp64_to_fp16_rne(p) : float_bits(static_cast<float>(p));
  const int delta = static_cast<int>(d.next() % 5) - 2;
  if ((c & f.exp_mask()) != f.exp_mask()) {
    c = (c + static_cast<uint64_t>(delta)) & ((uint64_t{1} << f.width()) - 1);
  }
  return c;
}

}  // namespace

FastCheck check_fp16_pairs(CheckedOp op, const FpControl& ctl, Fp16Build build,
                           uint64_t first, uint64_t stride, uint64_t seed) {
  if (stride == 0) throw ConfigError("check_fp16_pairs: stride must be positive");
  if (op == CheckedOp::fma) throw ConfigError("check_fp16_pairs: pairs are for add, sub, mul");
  { Comparer validate_first(ctl, seed); }  // throws here, not inside the parallel loop
  if (build == Fp16Build::f16c && !host_has_f16c()) {
    throw ConfigError("the F16C build of the fp16 fast path needs a CPU with F16C");
  }
  // One block per first operand, each with LFSR banks seeded from (seed, a): the same
  // result for any number of threads. The reported mismatch is the one with the lowest a.
  constexpr int kBlocks = 1 << 16;
  std::vector<FastCheck> blocks(kBlocks);
#pragma omp parallel for schedule(dynamic, 64)
  for (int hi = 0; hi < kBlocks; ++hi) {
    const uint64_t lo_i = static_cast<uint64_t>(hi) << 16, hi_i = lo_i + (1u << 16);
    uint64_t i = lo_i <= first ? first : lo_i + (stride - (lo_i - first) % stride) % stride;
    Comparer cmp(ctl, seed * 65537 + static_cast<uint64_t>(hi));
    for (; i < hi_i; i += stride) {
      const uint16_t a = static_cast<uint16_t>(i >> 16), b = static_cast<uint16_t>(i);
      const uint16_t fast = fast16(op, a, b, 0, ctl, cmp.fast_rng(), build);
      const uint64_t ref = reference(op, a, b, 0, kFp16, ctl, cmp.ref_rng());
      cmp.record(a, b, 0, fast, ref);
    }
    blocks[static_cast<size_t>(hi)] = cmp.out;
  }
  FastCheck total;
  for (const FastCheck& r : blocks) {
    if (r.mismatches != 0 && total.mismatches == 0) {
      total.a = r.a;
      total.b = r.b;
      total.fast = r.fast;
      total.reference = r.reference;
    }
    total.checked += r.checked;
    total.mismatches += r.mismatches;
  }
  return total;
}

FastCheck check_random_fma(const FloatFormat& f, const FpControl& ctl, Fp16Build build,
                           uint64_t n, uint64_t seed) {
  const bool half = f.exp_bits == 5 && f.man_bits == 10;
  const bool single = f.exp_bits == 8 && f.man_bits == 23;
  if (!half && !single) throw ConfigError("check_random_fma: format must be fp16 or fp32");
  Comparer cmp(ctl, seed);
  Draws d{seed};
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t a = random_operand(d, f), b = random_operand(d, f);
    const uint64_t kind = d.next() & 3;
    const uint64_t c = kind == 0   ? cancelling_addend(d, a, b, f)
                       : kind == 1 ? tiny_addend(d, a, b, f)
                                   : random_operand(d, f);
    const uint64_t fast =
        half ? fast_fma16(static_cast<uint16_t>(a), static_cast<uint16_t>(b),
                          static_cast<uint16_t>(c), ctl, cmp.fast_rng(), build)
             : fast_fma32(static_cast<uint32_t>(a), static_cast<uint32_t>(b),
                          static_cast<uint32_t>(c), ctl, cmp.fast_rng());
    cmp.record(a, b, c, fast, fma_bits(a, b, c, f, ctl, cmp.ref_rng()));
  }
  return cmp.out;
}

// The lane loops on runs of 1 .. 67 operands (whole vector groups and partial ones): each
// element against the reference, the random draws compared after each run (both sides
// draw in element order).
FastCheck check_random_fma_lanes(const FloatFormat& f, const FpControl& ctl, LanesBuild build,
                                 uint64_t n, uint64_t seed) {
  const bool half = f.exp_bits == 5 && f.man_bits == 10;
  const bool single = f.exp_bits == 8 && f.man_bits == 23;
  if (!half && !single) throw ConfigError("check_random_fma_lanes: format must be fp16 or fp32");
  Comparer cmp(ctl, seed);
  Draws d{seed};
  constexpr uint64_t kMaxRun = 67;
  uint64_t a[kMaxRun], b[kMaxRun], c[kMaxRun], fast[kMaxRun], ref[kMaxRun];
  for (uint64_t i = 0; i < n;) {
    const uint64_t m = std::min<uint64_t>(n - i, 1 + d.next() % kMaxRun);
    for (uint64_t k = 0; k < m; ++k) {
      a[k] = random_operand(d, f);
      b[k] = random_operand(d, f);
      const uint64_t kind = d.next() & 3;
      c[k] = kind == 0   ? cancelling_addend(d, a[k], b[k], f)
             : kind == 1 ? tiny_addend(d, a[k], b[k], f)
                         : random_operand(d, f);
    }
    if (half) {
      uint16_t x[kMaxRun], y[kMaxRun], z[kMaxRun], r[kMaxRun];
      for (uint64_t k = 0; k < m; ++k) {
        x[k] = static_cast<uint16_t>(a[k]);
        y[k] = static_cast<uint16_t>(b[k]);
        z[k] = static_cast<uint16_t>(c[k]);
      }
      fast_fma16_lanes(x, y, z, r, m, ctl, cmp.fast_rng(), build);
      for (uint64_t k = 0; k < m; ++k) fast[k] = r[k];
    } else {
      uint32_t x[kMaxRun], y[kMaxRun], z[kMaxRun], r[kMaxRun];
      for (uint64_t k = 0; k < m; ++k) {
        x[k] = static_cast<uint32_t>(a[k]);
        y[k] = static_cast<uint32_t>(b[k]);
        z[k] = static_cast<uint32_t>(c[k]);
      }
      fast_fma32_lanes(x, y, z, r, m, ctl, cmp.fast_rng(), build);
      for (uint64_t k = 0; k < m; ++k) fast[k] = r[k];
    }
    for (uint64_t k = 0; k < m; ++k) ref[k] = fma_bits(a[k], b[k], c[k], f, ctl, cmp.ref_rng());
    const bool draws_equal = cmp.same_draws();
    for (uint64_t k = 0; k < m; ++k) {
      cmp.record(a[k], b[k], c[k], fast[k], ref[k], draws_equal || k + 1 < m);
    }
    i += m;
  }
  return cmp.out;
}

}  // namespace wafersim::numerics
