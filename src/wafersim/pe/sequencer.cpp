// I-Seq 836 and Dec 840 [0347]-[0353]: fetch from memory, decode, and execute the
// instructions that are not vector operations (descriptor loads and stores, jumps and
// branches, register moves, block / unblock / activate, FP and RNG configuration).
#include <algorithm>

#include "wafersim/pe/ce_errors.hpp"
#include "wafersim/pe/color_set.hpp"
#include "wafersim/pe/compute_element.hpp"
#include "wafersim/pe/datapath.hpp"
#include "wafersim/pe/operand.hpp"

namespace wafersim::pe {

using isa::Kind;

uint32_t ComputeElement::fetch_word(uint32_t index) const {
  if (index >= core_.cfg.max_instructions()) {
    throw MemoryAccessError(core_.name() + ": instruction index " + std::to_string(index) +
                            " is outside instruction memory (0.." +
                            std::to_string(core_.cfg.max_instructions() - 1) + ")");
  }
  return fetch(index);
}

uint32_t ComputeElement::fetch(uint32_t index) const {
  // Three 20-bit instructions per 64-bit word of the code region [0348].
  const uint32_t addr = core_.cfg.data_bytes() + index / 3 * 8;
  const uint64_t word = core_.mem.read_le(addr, 8);
  return static_cast<uint32_t>((word >> (20 * (index % 3))) & 0xFFFFFu);
}

const Decoded& ComputeElement::decode_own(uint32_t index) {
  if (decoded_version_ != core_.mem.code_version()) {
    decoded_.clear();
    decoded_at_.clear();
    decoded_version_ = core_.mem.code_version();
  }
  if (index >= decoded_at_.size()) {
    const size_t n = std::min<size_t>(core_.cfg.max_instructions(), (index / 64 + 1) * 64);
    decoded_at_.resize(n, 0);
  }
  uint16_t& at = decoded_at_[index];
  if (at == 0) {
    decoded_.push_back(classify(decode(fetch(index))));
    at = static_cast<uint16_t>(decoded_.size());
  }
  return decoded_[at - 1u];
}

void ComputeElement::issue_instruction() {
  const uint32_t pc = task_.pc;
  if (pc >= core_.cfg.max_instructions()) {
    throw ProgramError(core_.name() + " task " + std::to_string(task_.id) + ": pc " +
                       std::to_string(pc) + " is outside instruction memory (" +
                       std::to_string(core_.cfg.max_instructions()) + " instructions)");
  }
  // The entry stays in place while the instruction executes: only decode_own() changes
  // the CE's own table, and a shared program never changes.
  const Decoded& d = decoded(pc);  // pc checked above
  if (d.route == Route::checked) {
    issue_checked(d.in);
    return;
  }
  ++core_.stats().instructions[static_cast<int>(d.in.op)];
  ++core_.progress;
  switch (d.route) {
    case Route::add_imm:
      core_.gpr[d.reg0] = static_cast<uint16_t>(core_.gpr[d.reg0] + d.value);
      advance(pc + 1, d.in.term);
      break;
    case Route::jump: advance(static_cast<uint32_t>(d.value), d.in.term); break;
    case Route::branch_rel:
      // [0600]: a taken branch does not end the task.
      if (core_.flag == d.cond) advance(static_cast<uint32_t>(pc + d.value), false);
      else advance(pc + 1, d.in.term);
      break;
    case Route::compare: execute_compare(d); break;
    case Route::alu: execute_alu(d); break;
    case Route::scalar: execute_scalar(d.in); break;
    default: start_vector(d.in);
  }
}

// Illegal words (word 0, an empty entry, among them) and tensor instructions.
void ComputeElement::issue_checked(const Instruction& in) {
  const uint32_t pc = task_.pc;
  if (in.word == 0 && pc == core_.base + 4u * static_cast<uint32_t>(task_.id) &&
      task_.how != TaskStart::activation) {
    // An empty entry: say which wavelet came to which PE with no task to run [0371].
    const bool data = task_.how == TaskStart::data_wavelet;
    throw ProgramError(core_.name() + ": a " + (data ? "data" : "control") + " wavelet " +
                       (data ? "arrived on color " : "names task id ") + std::to_string(task_.id) +
                       (data ? ", and no task is bound to that color"
                             : ", and no task is bound to that id") +
                       " (its entry, instruction " + std::to_string(pc) +
                       ", is empty): give the program a .task for id " +
                       std::to_string(task_.id) + ", or route the color elsewhere");
  }
  if (in.op == isa::Op::illegal) {
    // An unassigned opcode hints at empty or overwritten memory; else name the bad operand.
    const std::string why = in.named == isa::Op::illegal
                                ? "no task code at this entry, or memory overwritten?"
                                : illegal_reason(in);
    throw ProgramError(core_.name() + " task " + std::to_string(task_.id) + " pc " +
                       std::to_string(pc) + ": illegal instruction " + hex(in.word) + " (" +
                       why + ")");
  }
  const Kind kind = in.info().kind;
  if (kind == Kind::tensor && in.op != isa::Op::tbias && in.op != isa::Op::tdone &&
      tensor_busy()) {
    // One pass at a time: the instruction waits for the unit (tbias / tdone only latch).
    CeLiveStats& s = core_.stats();
    ++s.stall_cycles;
    ++s.stalls[static_cast<int>(StallCause::tensor_busy)];
    return;
  }
  if (kind != Kind::tensor) internal_error(core_.name() + ": " + in.mnemonic() + " routed as checked");
  ++core_.stats().instructions[static_cast<int>(in.op)];
  ++core_.progress;
  execute_tensor(in);
}

namespace {

// Immediate-format addresses [0603]: the 10-bit immediate sign-extended to a 15-bit
// address, or shifted left one bit first (for data wider than 16 bits).
uint32_t imm_address(const Instruction& in) {
  int64_t v = sign_extend(in.imm10(), 10);
  if (in.info().imm == isa::ImmMode::addr_x2) v *= 2;
  return static_cast<uint32_t>(v) & 0x7FFFu;
}

}  // namespace

void ComputeElement::execute_scalar(const Instruction& in) {
  const isa::OpInfo& info = in.info();
  const uint32_t pc = task_.pc;
  uint32_t next = pc + 1;
  bool term = in.term;
  auto check = [&](uint32_t addr, uint32_t n) {
    if (uint64_t{addr} + n > core_.cfg.data_bytes() || addr % 2) {
      memory_error(core_, pc, info.mnemonic,
                   "address " + std::to_string(addr) + " (" + std::to_string(n) +
                       " bytes) is odd or outside data memory [0, " +
                       std::to_string(core_.cfg.data_bytes()) + ")");
    }
    return addr;
  };
  auto dsr_index = [&](int lo, int hi, const char* what) {
    if (in.op0 < lo || in.op0 > hi) {
      fail(in, std::string(what) + " " + std::to_string(in.op0) + " does not exist (" +
                   std::to_string(lo) + ".." + std::to_string(hi) + ") [0355]");
    }
    return static_cast<int>(in.op0);
  };
  // The source of a One Source, No Destination instruction that is not a vector [0599].
  auto source_value = [&]() -> uint32_t {
    switch (in.op1_type) {
      case 1: return core_.mem.read16(check(in.imm8(), 2));
      case 2: return core_.gpr[in.op1];
      case 3: return in.imm8();
      default: fail(in, "a vector source (operand 1 type 0) is not allowed here");
    }
  };

  switch (info.kind) {
    case Kind::load_dsr:
    case Kind::store_dsr: {
      const uint32_t addr = imm_address(in);
      const bool load = info.kind == Kind::load_dsr;
      switch (info.reg) {
        case isa::RegSet::s0:
        case isa::RegSet::s1:
        case isa::RegSet::d: {
          const DsrSet set = info.reg == isa::RegSet::s0   ? DsrSet::s0
                             : info.reg == isa::RegSet::s1 ? DsrSet::s1
                                                           : DsrSet::d;
          const int n = dsr_index(0, isa::kDsrsPerSet - 1, "DSR");
          check(addr, 6);  // 48 bits [0355]
          if (load) core_.dsr.dsr(set, n) = core_.mem.read_le(addr, 6) & kDsrMask;
          else core_.mem.write_le(addr, 6, core_.dsr.dsr(set, n));
          break;
        }
        case isa::RegSet::x: {
          const int n = dsr_index(isa::kFirstXdsr, isa::kLastXdsr, "XDSR");
          check(addr, 8);  // 64 bits, the low 51 used [0355]
          if (load) core_.dsr.xdsr(n) = core_.mem.read_le(addr, 8) & kXdsrMask;
          else core_.mem.write_le(addr, 8, core_.dsr.xdsr(n));
          break;
        }
        default: {
          const int n = dsr_index(isa::kFirstStrideReg, isa::kLastStrideReg, "stride register");
          check(addr, 2);  // 16 bits, the low 15 used [0355]
          if (load) core_.dsr.stride_reg(n) = core_.mem.read16(addr) & kStrideMask;
          else core_.mem.write16(addr, core_.dsr.stride_reg(n));
        }
      }
      break;
    }
    case Kind::movi:
      core_.gpr[in.op0] = static_cast<uint16_t>(sign_extend(in.imm10(), 10));
      break;
    case Kind::movhi:
      core_.gpr[in.op0] = static_cast<uint16_t>((in.imm10() << 6) | (core_.gpr[in.op0] & 0x3Fu));
      break;
    case Kind::ld16: core_.gpr[in.op0] = core_.mem.read16(check(imm_address(in), 2)); break;
    case Kind::st16: core_.mem.write16(check(imm_address(in), 2), core_.gpr[in.op0]); break;
    case Kind::nop: break;
    case Kind::block:
    case Kind::unblock:
    case Kind::activate: {
      const uint32_t v = source_value();
      apply_color_op(core_, info.kind, color_set_of(core_, pc, info.mnemonic, v, in.op1_type == 3));
      break;
    }
    case Kind::branch: {
      // (addi, jmp and branches by an immediate offset are routed directly: classify.)
      if (core_.flag == info.cond) {
        next = source_value();  // a register or memory value: an absolute target
        term = false;  // [0600]: a taken branch does not end the task
      }
      break;
    }
    case Kind::jump_reg: next = source_value(); break;
    case Kind::setrng: {
      const uint32_t v = source_value();
      if (v >= static_cast<uint32_t>(core_.rng.count())) {
        fail(in, "random-number resource " + std::to_string(v) + " does not exist (this CE has " +
                     std::to_string(core_.rng.count()) + ") [0682]");
      }
      core_.fpc.rng = static_cast<uint8_t>(v);
      break;
    }
    case Kind::setfpc: {
      const uint32_t v = source_value();
      numerics::FpControl c;
      const auto mode = isa::fpc::mode.get(v), sub = isa::fpc::subnormals.get(v),
                 rng = isa::fpc::rng.get(v);
      if (mode > 5 || sub > 2 || rng >= static_cast<uint64_t>(core_.rng.count())) {
        fail(in, "FP control value " + hex(v) + " has an invalid rounding mode (" +
                     std::to_string(mode) + "), subnormal mode (" + std::to_string(sub) +
                     ") or random-number resource (" + std::to_string(rng) + ")");
      }
      c.mode = static_cast<numerics::RoundingMode>(mode);
      c.subnormals = static_cast<numerics::Subnormals>(sub);
      c.rng = static_cast<uint8_t>(rng);
      c.max_sat = isa::fpc::max_sat.get(v) != 0;
      c.min_sat = isa::fpc::min_sat.get(v) != 0;
      c.stochastic_bits = static_cast<uint8_t>(isa::fpc::stochastic_bits_minus_1.get(v) + 1);
      c.stochastic_or_lower = isa::fpc::or_lower.get(v) != 0;
      core_.fpc = c;
      break;
    }
    case Kind::seedrng: core_.rng.resource(core_.fpc.rng).reseed(source_value()); break;
    case Kind::cycles: {
      // One snapshot of the 48-bit cycle counter in three registers, low word first.
      for (int k = 0; k < 3; ++k) {
        core_.gpr[in.op0 + k] = static_cast<uint16_t>(core_.cycle >> (16 * k));
      }
      break;
    }
    case Kind::filter: set_filter_from(in, check(source_value(), 6)); break;
    default: fail(in, "internal: not a scalar instruction");
  }
  advance(next, term);
}

// A comparison routed as Route::compare: what start_vector does for it (one iteration of
// one element, then completion: the flag), without a VectorOp.
void ComputeElement::execute_compare(const Decoded& d) {
  const isa::OpInfo& info = d.in.info();
  const uint32_t a = core_.gpr[d.reg0];
  const uint32_t b = d.src1_imm ? static_cast<uint32_t>(d.value) : core_.gpr[d.reg1];
  core_.flag = datapath::compare(info.vop, info.src1, a, b);
  CeLiveStats& s = core_.stats();
  ++s.iterations;
  ++s.element_ops;
  ++core_.progress;
  advance(task_.pc + 1, d.in.term);
}

// An operation routed as Route::alu: what start_vector does for it (one iteration of one
// element: the datapath, the register written, the counts), without a VectorOp.
void ComputeElement::execute_alu(const Decoded& d) {
  const isa::OpInfo& info = d.in.info();
  const uint32_t a = d.src0 ? core_.gpr[d.reg0] : 0u;
  const uint32_t b = d.src1_imm ? static_cast<uint32_t>(d.value) : core_.gpr[d.reg1];
  core_.gpr[d.reg0] = static_cast<uint16_t>(
      datapath::compute(info.vop, info.src1, info.dst, a, b, 0u, core_.fpc, core_.rng));
  CeLiveStats& s = core_.stats();
  ++s.iterations;
  ++s.element_ops;
  ++core_.progress;
  advance(task_.pc + 1, d.in.term);
}

// The data filter [0597]: a three-word record (layout: filter_record in the ISA file).
void ComputeElement::set_filter_from(const Instruction& in, uint32_t addr) {
  const uint16_t head = core_.mem.read16(addr);
  const int color = head & 0x3F;
  const bool enable = (head >> 15) & 1u;
  const uint16_t lo = core_.mem.read16(addr + 2), hi = core_.mem.read16(addr + 4);
  if ((head & 0x7FC0u) != 0 || color >= core_.cfg.fabric_colors) {
    fail(in, "filter record at " + std::to_string(addr) + ": word 0 = " + hex(head) +
                 " is not a fabric color (0.." + std::to_string(core_.cfg.fabric_colors - 1) +
                 ") with bits 14:6 clear");
  }
  const fabric::ColorMask bit = fabric::ColorMask{1} << color;
  if (!enable) {
    core_.filtered &= ~bit;
    return;
  }
  if (lo > hi) {
    fail(in, "filter record at " + std::to_string(addr) + " keeps indices " + std::to_string(lo) +
                 ".." + std::to_string(hi) + ", an empty range");
  }
  core_.filtered |= bit;
  core_.filter_lo[static_cast<size_t>(color)] = lo;
  core_.filter_hi[static_cast<size_t>(color)] = hi;
}

}  // namespace wafersim::pe
