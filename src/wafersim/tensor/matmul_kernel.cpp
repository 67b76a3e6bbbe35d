#include "wafersim/tensor/matmul_kernel.hpp"

#include <algorithm>
#include <vector>

namespace wafersim::tensor {

namespace {

// Products of 8-bit operands are below 2^16 in magnitude, so 16384 of them fit an int32
// without overflow; longer sums are combined with wrapping uint32 additions.
constexpr int64_t kChunk = 16384;

int32_t dot(const int16_t* __restrict a, const int16_t* __restrict b, int64_t n) {
  int32_t s = 0;
  for (int64_t k = 0; k < n; ++k) s += int32_t{a[k]} * b[k];
  return s;
}

// 2 positions x 4 channels: eight independent reductions the compiler turns into packed
// multiply-adds (pmaddwd on x86-64's baseline SSE2).
void micro_2x4(const int16_t* __restrict a0, const int16_t* __restrict a1,
               const int16_t* __restrict b0, const int16_t* __restrict b1,
               const int16_t* __restrict b2, const int16_t* __restrict b3, int64_t n,
               int32_t* r) {
  int32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int32_t x0 = a0[k], x1 = a1[k];
    s00 += x0 * b0[k];
    s01 += x0 * b1[k];
    s02 += x0 * b2[k];
    s03 += x0 * b3[k];
    s10 += x1 * b0[k];
    s11 += x1 * b1[k];
    s12 += x1 * b2[k];
    s13 += x1 * b3[k];
  }
  r[0] = s00, r[1] = s01, r[2] = s02, r[3] = s03, r[4] = s10, r[5] = s11, r[6] = s12, r[7] = s13;
}

uint32_t wrap(int32_t v) { return static_cast<uint32_t>(v); }

}  // namespace

void int_tile(const int16_t* a, const int16_t* bt, int64_t K, int64_t p0, int64_t p1, int64_t o0,
              int64_t o1, int32_t* out, int64_t ldo) {
  std::vector<uint32_t> acc(static_cast<size_t>((p1 - p0) * (o1 - o0)), 0u);
  const int64_t width = o1 - o0;
  for (int64_t k0 = 0; k0 < K; k0 += kChunk) {
    const int64_t n = std::min(kChunk, K - k0);
    int64_t p = p0;
    for (; p + 2 <= p1; p += 2) {
      const int16_t* a0 = a + p * K + k0;
      const int16_t* a1 = a0 + K;
      int64_t o = o0;
      for (; o + 4 <= o1; o += 4) {
        int32_t r[8];
        const int16_t* b0 = bt + o * K + k0;
        micro_2x4(a0, a1, b0, b0 + K, b0 + 2 * K, b0 + 3 * K, n, r);
        uint32_t* c0 = acc.data() + (p - p0) * width + (o - o0);
        uint32_t* c1 = c0 + width;
        for (int j = 0; j < 4; ++j) c0[j] += wrap(r[j]), c1[j] += wrap(r[4 + j]);
      }
      for (; o < o1; ++o) {
        const int16_t* b0 = bt + o * K + k0;
        acc[(p - p0) * width + (o - o0)] += wrap(dot(a0, b0, n));
        acc[(p + 1 - p0) * width + (o - o0)] += wrap(dot(a1, b0, n));
      }
    }
    for (; p < p1; ++p) {
      for (int64_t o = o0; o < o1; ++o) {
        acc[(p - p0) * width + (o - o0)] += wrap(dot(a + p * K + k0, bt + o * K + k0, n));
      }
    }
  }
  for (int64_t p = p0; p < p1; ++p) {
    for (int64_t o = o0; o < o1; ++o) {
      out[p * ldo + o] = static_cast<int32_t>(acc[(p - p0) * width + (o - o0)]);
    }
  }
}

void float_tile(const float* at, const float* b, int64_t K, int64_t P, int64_t O, int64_t p0,
                int64_t p1, int64_t o0, int64_t o1, float* out, int64_t ldo) {
  const int64_t width = p1 - p0;
  std::vector<float> acc(static_cast<size_t>(width));
  for (int64_t o = o0; o < o1; ++o) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int64_t k = 0; k < K; ++k) {
      const float w = b[k * O + o];
      const float* x = at + k * P + p0;
      for (int64_t i = 0; i < width; ++i) {
        const float prod = w * x[i];  // rounded to fp32, then added: no contraction
        acc[i] = acc[i] + prod;
      }
    }
    for (int64_t i = 0; i < width; ++i) out[(p0 + i) * ldo + o] = acc[i];
  }
}

}  // namespace wafersim::tensor
