// Decoding of the 20-bit instruction formats of seed 000 FIG. 25A-C [0581]-[0603]. The
// format, opcode and field tables come from the generated isa_tables.hpp.
#pragma once

#include <cstdint>
#include <string>

#include "wafersim/pe/isa_tables.hpp"

namespace wafersim::pe {

// Why a word is not an instruction (docs/isa.md, "Illegal words").
enum class Illegal : uint8_t {
  none,
  wide,           // more than 20 bits
  opcode,         // an unassigned opcode
  reserved,       // the reserved bit of FIG. 25B is set
  unused_bits,    // bits the operand-1 type leaves unused are not 0
  operand_type,   // the opcode does not take this operand type
  no_dsr,         // a DSR number names no S0/S1/D register
  no_xdsr,        // an XDSR number names no XDSR
  no_stride_reg,  // a stride register number names no stride register
  register_pair,  // a 32-bit register operand is not an even pair
  odd_address,    // a 16-bit memory operand at an odd address
  id_range,       // an 8-bit immediate names no task id
  register_triple,  // rdcyc's three registers rN..rN+2 leave the register file
  nonzero_immediate,  // an instruction without an immediate has one
};

struct Instruction {
  uint32_t word = 0;
  isa::Op op = isa::Op::illegal;
  isa::Op named = isa::Op::illegal;  // the opcode's instruction, even when `op` is illegal
  Illegal illegal = Illegal::none;
  uint8_t illegal_operand = 0;  // 0 or 1: the operand at fault
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

// Decodes a word; `op` is Op::illegal, and `illegal` says why, for a word wider than 20
// bits, an unassigned opcode, a set reserved bit, or operand fields the ISA data forbids
// (the Python disassembler lists exactly these words as `.word`).
Instruction decode(uint32_t word);

// One line on why `in` is illegal, e.g. "ldxds: operand 0 = 11 names no XDSR (2..7)";
// empty for a legal instruction.
std::string illegal_reason(const Instruction& in);

// Encodes the fields of `in` (op, operands, immediates, term) into a word.
uint32_t encode(const Instruction& in);

inline int64_t sign_extend(uint64_t v, int bits) {
  const uint64_t m = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

}  // namespace wafersim::pe
