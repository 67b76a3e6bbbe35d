// Data Path 852 [0359], [0702]: one lane of a vector operation on raw bit patterns. Every
// floating-point result is rounded once by the numerics layer under the FP control
// register (fused multiply-add included [0675]).
#pragma once

#include <cstddef>
#include <cstdint>

#include "wafersim/numerics/fp_control.hpp"
#include "wafersim/numerics/lfsr.hpp"
#include "wafersim/pe/isa_tables.hpp"

namespace wafersim::pe::datapath {

// One lane of `op`: a = source 0, b = source 1, c = the scalar third source of a
// multiply-accumulate (dst = a + b * c). Element types come from the opcode table.
uint32_t compute(isa::VecOp op, isa::Elem src, isa::Elem dst, uint32_t a, uint32_t b,
                 uint32_t c, const numerics::FpControl& ctl, numerics::LfsrBank& rng);

// Lanes 0 .. n-1 of `op`: r[k] = compute(op, src, dst, a[k], b[k], c, ...), in order, the
// same bits and random draws. fp16 and fp32 add, subtract, multiply and multiply-accumulate
// run several lanes at a time (numerics/fast_fma_lanes.hpp).
void compute_lanes(isa::VecOp op, isa::Elem src, isa::Elem dst, const uint32_t* a,
                   const uint32_t* b, uint32_t c, uint32_t* r, size_t n,
                   const numerics::FpControl& ctl, numerics::LfsrBank& rng);

// Whether compute_lanes has a many-lanes loop for `op` (the others go lane by lane).
bool has_lanes(isa::VecOp op, isa::Elem src, isa::Elem dst);

// One lane of a comparison [0556].
bool compare(isa::VecOp op, isa::Elem src, uint32_t a, uint32_t b);

}  // namespace wafersim::pe::datapath
