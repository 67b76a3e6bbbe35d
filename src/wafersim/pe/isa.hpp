// Decoding of the 20-bit instruction formats of seed 000 FIG. 25A-C [0581]-[0603]. The
// format, opcode and field tables come from the generated isa_tables.hpp.
#pragma once

#include <cstdint>

#include "wafersim/pe/isa_tables.hpp"

namespace wafersim::pe {

struct Instruction {
  uint32_t word = 0;
  isa::Op op = isa::Op::illegal;
  isa::Family family = isa::Family::imm;
  uint8_t op0_type = 0, op0 = 0, op1_type = 0, op1 = 0, imm_high = 0;
  uint16_t imm_low = 0;
  bool term = false;

  const isa::OpInfo& info() const { return isa::kOpInfo[static_cast<int>(op)]; }
  const char* mnemonic() const { return info().mnemonic; }
  // One Source, No Destination: 8-bit immediate Immediate High : Operand 1 [0598].
  uint16_t imm8() const { return static_cast<uint16_t>((imm_high << 4) | op1); }
  // Immediate format: 10-bit Immediate High : Immediate Low [0601].
  uint16_t imm10() const { return static_cast<uint16_t>((imm_high << 9) | imm_low); }
  // Immediate format without a register operand: Immediate Low, Operand 0, Immediate
  // High concatenated, High most significant [0603].
  uint16_t imm14() const {
    return static_cast<uint16_t>((imm_high << 13) | (op0 << 9) | imm_low);
  }
};

// The format of a word, from its prefix code [0583], [0597], [0602].
isa::Family family_of(uint32_t word);

// Decodes a word; `op` is Op::illegal for an unassigned opcode, a set reserved bit or a
// word wider than 20 bits.
Instruction decode(uint32_t word);

// Encodes the fields of `in` (op, operands, immediates, term) into a word.
uint32_t encode(const Instruction& in);

inline int64_t sign_extend(uint64_t v, int bits) {
  const uint64_t m = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

}  // namespace wafersim::pe
