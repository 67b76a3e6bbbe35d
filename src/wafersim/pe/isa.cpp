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

bool dsr_ok(uint32_t n) { return n < static_cast<uint32_t>(kDsrsPerSet); }

// A register operand of element type `e`: 32 bits take an even pair rN:rN+1 [0359].
bool gpr_ok(uint32_t n, Elem e) {
  return (e != Elem::fp32 && e != Elem::i32) || (n % 2 == 0 && n + 1 < kGprs);
}

struct Fault {
  Illegal why = Illegal::none;
  uint8_t operand = 0;
};

// Immediate format: the register file of operand 0 and the alignment of 16-bit accesses.
Fault check_imm(const Instruction& in, const OpInfo& info) {
  switch (info.reg) {
    case RegSet::s0:
    case RegSet::s1:
    case RegSet::d:
      if (!dsr_ok(in.op0)) return {Illegal::no_dsr, 0};
      break;
    case RegSet::x:
      if (in.op0 < kFirstXdsr || in.op0 > kLastXdsr) return {Illegal::no_xdsr, 0};
      break;
    case RegSet::sr:
      if (in.op0 < kFirstStrideReg || in.op0 > kLastStrideReg) return {Illegal::no_stride_reg, 0};
      break;
    case RegSet::gpr3:
      if (in.op0 + 3 > kGprs) return {Illegal::register_triple, 0};
      break;
    case RegSet::none: break;
  }
  if (info.imm == ImmMode::zero && in.imm10() != 0) return {Illegal::nonzero_immediate, 1};
  // The sign-extended immediate is the byte address; the x2 modes are always even.
  if (info.imm == ImmMode::addr && in.imm10() % 2) return {Illegal::odd_address, 1};
  return {};
}

// One Source, No Destination: operand 1 of [0599].
Fault check_nodst1src(const Instruction& in, const OpInfo& info) {
  switch (in.op1_type) {
    case 0: return dsr_ok(in.op1) ? Fault{} : Fault{Illegal::no_dsr, 1};
    case 1: return in.imm8() % 2 ? Fault{Illegal::odd_address, 1} : Fault{};
    case 3:
      if (info.imm == ImmMode::ids && in.imm8() >= kIds && in.imm8() != kAllIdsImm8) {
        return {Illegal::id_range, 1};
      }
      return {};
    default: return {};
  }
}

// The multiple-operand formats: operand 0 of TABLE-US-00006..8 [0585]-[0589] and operand
// 1 of TABLE-US-00009 [0591].
Fault check_multi(const Instruction& in, const OpInfo& info) {
  if (in.op1_type == 0 && !dsr_ok(in.op1)) return {Illegal::no_dsr, 1};
  if (in.op1_type == 2 && !gpr_ok(in.op1, info.src1)) return {Illegal::register_pair, 1};
  const bool gpr0 = in.family == Family::dst2src ? in.op0_type >= 2 : in.op0_type == 1;
  if (!gpr0) return dsr_ok(in.op0) ? Fault{} : Fault{Illegal::no_dsr, 0};
  // Type 3 with an S1 source writes DDSR[op0]; otherwise it writes GPR[0], always a pair.
  const bool gpr_dst = in.family != Family::dst2src || in.op0_type == 2;
  if (!gpr_ok(in.op0, info.src0) || (gpr_dst && !gpr_ok(in.op0, info.dst))) {
    return {Illegal::register_pair, 0};
  }
  if (in.family == Family::dst2src && in.op0_type == 3 && in.op1_type == 0 && !dsr_ok(in.op0)) {
    return {Illegal::no_dsr, 0};
  }
  return {};
}

Fault check_operands(const Instruction& in, const OpInfo& info) {
  if (!((info.op0_types >> in.op0_type) & 1u)) return {Illegal::operand_type, 0};
  if (!((info.op1_types >> in.op1_type) & 1u)) return {Illegal::operand_type, 1};
  if (in.word & kOp1ZeroBits[static_cast<int>(in.family)][in.op1_type]) {
    return {Illegal::unused_bits, 1};
  }
  switch (in.family) {
    case Family::imm: return check_imm(in, info);
    case Family::nodst1src: return check_nodst1src(in, info);
    default: return check_multi(in, info);
  }
}
}  // namespace

Instruction decode(uint32_t word) {
  Instruction in;
  in.word = word;
  if (word >> kWordBits) {
    in.illegal = Illegal::wide;
    return in;
  }
  in.family = family_of(word);
  const FamilyInfo& f = kFamilyInfo[static_cast<int>(in.family)];
  in.op0_type = static_cast<uint8_t>(f.op0_type.get(word));
  in.op0 = static_cast<uint8_t>(f.op0.get(word));
  in.op1_type = static_cast<uint8_t>(f.op1_type.get(word));
  in.op1 = static_cast<uint8_t>(f.op1.get(word));
  in.imm_high = static_cast<uint8_t>(f.imm_high.get(word));
  in.imm_low = static_cast<uint16_t>(f.imm_low.get(word));
  in.term = f.term.get(word) != 0;
  if (f.reserved.get(word) != 0) {
    in.illegal = Illegal::reserved;
    return in;
  }
  in.named = lookup(in.family, static_cast<uint32_t>(f.opcode.get(word)));
  if (in.named == Op::illegal) {
    in.illegal = Illegal::opcode;
    return in;
  }
  const Fault fault = check_operands(in, kOpInfo[static_cast<int>(in.named)]);
  in.illegal = fault.why;
  in.illegal_operand = fault.operand;
  if (in.illegal == Illegal::none) in.op = in.named;
  return in;
}

std::string illegal_reason(const Instruction& in) {
  using std::to_string;
  const uint32_t n = in.illegal_operand == 0 ? in.op0 : in.op1;
  const std::string opnd = "operand " + to_string(in.illegal_operand) + " = " + to_string(n);
  std::string why;
  switch (in.illegal) {
    case Illegal::none: return "";
    case Illegal::wide: return "wider than " + to_string(kWordBits) + " bits";
    case Illegal::opcode: return "unassigned opcode";
    case Illegal::reserved: return "the reserved bit is set";
    case Illegal::operand_type:
      why = "takes no operand " + to_string(in.illegal_operand) + " of type " +
            to_string(in.illegal_operand == 0 ? in.op0_type : in.op1_type);
      break;
    case Illegal::unused_bits:
      why = "bits that operand 1 of type " + to_string(in.op1_type) + " leaves unused are not 0";
      break;
    case Illegal::no_dsr: why = opnd + " names no DSR (0.." + to_string(kDsrsPerSet - 1) + ")"; break;
    case Illegal::no_xdsr:
      why = opnd + " names no XDSR (" + to_string(kFirstXdsr) + ".." + to_string(kLastXdsr) + ")";
      break;
    case Illegal::no_stride_reg:
      why = opnd + " names no stride register (" + to_string(kFirstStrideReg) + ".." +
            to_string(kLastStrideReg) + ")";
      break;
    case Illegal::register_pair:
      why = opnd + ": a 32-bit register operand is an even pair r0, r2, ..., r" +
            to_string(kGprs - 2);
      break;
    case Illegal::odd_address: {
      const int64_t a = in.family == Family::imm ? sign_extend(in.imm10(), 10) & 0x7FFF : in.imm8();
      why = "the address " + to_string(a) + " of a 16-bit memory operand is odd";
      break;
    }
    case Illegal::register_triple:
      why = opnd + ": three registers rN..rN+2 need N <= " + to_string(kGprs - 3);
      break;
    case Illegal::nonzero_immediate: why = "the immediate field is not 0"; break;
    case Illegal::id_range:
      why = "the immediate " + to_string(in.imm8()) + " names no id (0.." + to_string(kIds - 1) +
            ", or " + to_string(kAllIdsImm8) + ")";
      break;
  }
  return std::string(kOpInfo[static_cast<int>(in.named)].mnemonic) + ": " + why;
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
