// Blocked kernels that compute whole tiles of the matrix array's result at once (the fast
// path). They reproduce the units' arithmetic bit for bit: 32-bit wrapping integer sums, or
// fp32 accumulation in cycle order k = 0, 1, ... with a rounding after each product and sum.
#pragma once

#include <cstdint>

namespace wafersim::tensor {

// out[p * ldo + o] = sum_k a[p * K + k] * bt[o * K + k]  (mod 2^32) for p in [p0, p1),
// o in [o0, o1). Operands are int16 holding 8-bit values.
void int_tile(const int16_t* a, const int16_t* bt, int64_t K, int64_t p0, int64_t p1,
              int64_t o0, int64_t o1, int32_t* out, int64_t ldo);

// out[p * ldo + o] = fp32 sum in order k of fp32(at[k * P + p] * b[k * O + o]), starting from
// +0. `at` is K x P (positions contiguous), `b` is K x O.
void float_tile(const float* at, const float* b, int64_t K, int64_t P, int64_t O, int64_t p0,
                int64_t p1, int64_t o0, int64_t o1, float* out, int64_t ldo);

}  // namespace wafersim::tensor
