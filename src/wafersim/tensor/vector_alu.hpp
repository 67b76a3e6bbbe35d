// The ALU component of a triad [0085], [0091]-[0092]: one operation over every lane, with the
// operand size of cfg.size, the immediate rules of the opcode and optional predication by M0.
#pragma once

#include "wafersim/tensor/vector_isa.hpp"
#include "wafersim/tensor/vector_state.hpp"

namespace wafersim::tensor {

// Executes a decoded (hence valid) ALU slot on the state.
void execute_alu(const AluSlot& a, VectorState& s);

// The quantization rule (wafersim's choice, [0027] gives none):
// y = saturate(round_half_up((x * scale) >> shift) + zero_point) to s8 or u8; `relu` first
// clamps x at 0.
int32_t quantize(int64_t x, const QuantParams& q, bool to_unsigned, bool relu);

}  // namespace wafersim::tensor
