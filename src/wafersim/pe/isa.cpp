#include "wafersim/pe/isa.hpp"

namespace wafersim::pe {

using namespace isa;

Family family_of(uint32_t word) {
  if (((word >> 19) & 1u) == 0) return Family::imm;
  if (((word >> 18) & 1u) == 0) return Family::dst2src;
  if (((word >> 17) & 1u) == 0) return Family::dst1src;
  if (((word >> 16) & 1u) == 0) return Family::nodst2src;
  return Family::nodst1src;
}

namespace {
Op lookup(Family f, uint32_t opcode) {
  switch (f) {
    case Family::imm: return kDecode_imm[opcode];
    case Family::dst2src: return kDecode_dst2src[opcode];
    case Family::dst1src: return kDecode_dst1src[opcode];
    case Family::nodst2src: return kDecode_nodst2src[opcode];
    case Family::nodst1src: return kDecode_nodst1src[opcode];
  }
  return Op::illegal;
}
}  // namespace

Instruction decode(uint32_t word) {
  Instruction in;
  in.word = word;
  if (word >> kWordBits) return in;  // not a 20-bit word
  in.family = family_of(word);
  const FamilyInfo& f = kFamilyInfo[static_cast<int>(in.family)];
  in.op0_type = static_cast<uint8_t>(f.op0_type.get(word));
  in.op0 = static_cast<uint8_t>(f.op0.get(word));
  in.op1_type = static_cast<uint8_t>(f.op1_type.get(word));
  in.op1 = static_cast<uint8_t>(f.op1.get(word));
  in.imm_high = static_cast<uint8_t>(f.imm_high.get(word));
  in.imm_low = static_cast<uint16_t>(f.imm_low.get(word));
  in.term = f.term.get(word) != 0;
  if (f.reserved.get(word) != 0) return in;  // op stays illegal
  in.op = lookup(in.family, static_cast<uint32_t>(f.opcode.get(word)));
  return in;
}

uint32_t encode(const Instruction& in) {
  const OpInfo& info = in.info();
  const FamilyInfo& f = kFamilyInfo[static_cast<int>(info.family)];
  uint64_t w = 0;
  w = f.prefix.put(w, f.prefix_value);
  w = f.opcode.put(w, info.opcode);
  w = f.op0_type.put(w, in.op0_type);
  w = f.op0.put(w, in.op0);
  w = f.op1_type.put(w, in.op1_type);
  w = f.op1.put(w, in.op1);
  w = f.imm_high.put(w, in.imm_high);
  w = f.imm_low.put(w, in.imm_low);
  w = f.term.put(w, in.term ? 1 : 0);
  return static_cast<uint32_t>(w);
}

}  // namespace wafersim::pe
