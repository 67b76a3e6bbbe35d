#include "wafersim/pe/vector_op.hpp"

#include <algorithm>

#include "wafersim/pe/ce_errors.hpp"
#include "wafersim/pe/color_set.hpp"
#include "wafersim/pe/datapath.hpp"

namespace wafersim::pe {

using isa::Elem;
using isa::Family;
using isa::Kind;

namespace {

std::array<Operand*, 3> operands(VectorOp& op) { return {&op.src0, &op.src1, &op.dst}; }
std::array<const Operand*, 3> operands(const VectorOp& op) { return {&op.src0, &op.src1, &op.dst}; }
const char* const kNames[3] = {"src0", "src1", "dst"};

void resolve_operand0(const CeCore& core, VectorOp& op, int task_color) {
  const Instruction& in = op.in;
  const isa::OpInfo& info = in.info();
  const IssueCtx s0{op.pc, info.mnemonic, "src0"}, d{op.pc, info.mnemonic, "dst"};
  switch (info.family) {
    case Family::dst2src:  // TABLE-US-00006 [0585]
      switch (in.op0_type) {
        case 0:
          op.src0 = dsr_operand(core, s0, DsrSet::s0, in.op0, info.src0, Role::source, task_color);
          op.dst = dsr_operand(core, d, DsrSet::s0, in.op0, info.dst, Role::dest, task_color);
          if (op.dst.kind != OpndKind::mem1d && op.dst.kind != OpndKind::mem4d) {
            program_error(core, op.pc, info.mnemonic,
                          "dst: an in-place destination (operand 0 type 0) must be a 1D or 4D "
                          "memory vector, S0[" + std::to_string(in.op0) + "] holds a " +
                              operand_kind_name(op.dst.kind));
          }
          break;
        case 1:
          op.src0 = dsr_operand(core, s0, DsrSet::s0, in.op0, info.src0, Role::source, task_color);
          op.dst = dsr_operand(core, d, DsrSet::d, in.op0, info.dst, Role::dest, task_color);
          break;
        case 2:
          op.src0 = gpr_operand(core, s0, in.op0, info.src0, Role::source);
          op.dst = gpr_operand(core, d, in.op0, info.dst, Role::dest);
          break;
        default:
          op.src0 = gpr_operand(core, s0, in.op0, info.src0, Role::source);
          op.dst = in.op1_type == 0
                       ? dsr_operand(core, d, DsrSet::d, in.op0, info.dst, Role::dest, task_color)
                       : gpr_operand(core, d, 0, info.dst, Role::dest);
      }
      break;
    case Family::dst1src:  // TABLE-US-00008 [0589]
      op.dst = in.op0_type == 0
                   ? dsr_operand(core, d, DsrSet::d, in.op0, info.dst, Role::dest, task_color)
                   : gpr_operand(core, d, in.op0, info.dst, Role::dest);
      break;
    case Family::nodst2src:  // TABLE-US-00007 [0587]
      op.src0 = in.op0_type == 0
                    ? dsr_operand(core, s0, DsrSet::s0, in.op0, info.src0, Role::source, task_color)
                    : gpr_operand(core, s0, in.op0, info.src0, Role::source);
      break;
    default: break;
  }
}

void resolve_operand1(const CeCore& core, VectorOp& op, int task_color) {
  const Instruction& in = op.in;
  const isa::OpInfo& info = in.info();
  const IssueCtx s1{op.pc, info.mnemonic, "src1"};
  if (info.family == Family::nodst1src) {  // only a vector source comes through here
    op.src1 = dsr_operand(core, s1, DsrSet::s1, in.op1, Elem::i16, Role::source, task_color);
    return;
  }
  switch (in.op1_type) {  // TABLE-US-00009 [0591]
    case 0:
      op.src1 = dsr_operand(core, s1, DsrSet::s1, in.op1, info.src1, Role::source, task_color);
      break;
    case 1: op.src1 = mem_gpr6_operand(info.src1); break;
    case 2: op.src1 = gpr_operand(core, s1, in.op1, info.src1, Role::source); break;
    default: op.src1 = imm_operand(core, s1, in.op1, info.src1);
  }
}

uint32_t fmac_scalar(const CeCore& core, Elem e) {
  const uint16_t lo = core.gpr[isa::kFmacScalarGpr];
  if (e == Elem::fp32) return lo | (static_cast<uint32_t>(core.gpr[isa::kFmacScalarGpr + 1]) << 16);
  return lo;
}

bool same_dsr(const Operand& a, const Operand& b) {
  return a.is_vector() && b.is_vector() && a.set == b.set && a.reg == b.reg;
}

// Writes `raw` into the operand's DSR unless the program has replaced the descriptor
// since the operation read or last rewrote it.
bool rewrite_dsr(CeCore& core, const Operand& o, uint64_t raw) {
  uint64_t& reg = core.dsr.dsr(o.set, o.reg);
  if (reg != o.issue_raw && !(o.written && reg == o.written_raw)) return false;
  reg = raw;
  return true;
}

// The operands `op` holds were resolved for this same instruction, place, owner and task
// color, from descriptors that still read the same: resolving again would give them again
// (register and immediate operands depend on the instruction alone; 1D memory and fabric
// descriptors on their DSR; 4D and circular ones read more registers, so they resolve).
bool still_resolved(const VectorOp& op, const CeCore& core, const Instruction& in, uint32_t pc,
                    int owner, int task_color) {
  if (!op.resolved || op.in.word != in.word || op.pc != pc || op.owner != owner ||
      op.task_color != task_color) {
    return false;
  }
  for (const Operand* o : operands(op)) {
    if (o->kind == OpndKind::mem1d || o->is_fabric()) {
      if (core.dsr.dsr(o->set, o->reg) != o->issue_raw) return false;
    } else if (o->is_vector()) {
      return false;
    }
  }
  return true;
}

}  // namespace

void issue_vector_op(VectorOp& op, const CeCore& core, const Instruction& in, uint32_t pc,
                     int owner, int task_color) {
  if (still_resolved(op, core, in, pc, owner, task_color)) {
    // A loop issuing the same operation again: only its progress starts over.
    op.restart();
    return;
  }
  op.reset();
  op.in = in;
  op.pc = pc;
  op.owner = owner;
  op.task_color = task_color;
  const isa::OpInfo& info = in.info();
  op.colorset = info.kind == Kind::block || info.kind == Kind::unblock ||
                info.kind == Kind::activate;
  resolve_operand0(core, op, task_color);
  resolve_operand1(core, op, task_color);

  // All vector operands describe the same number of elements.
  bool have_len = false;
  for (int i = 0; i < 3; ++i) {
    const Operand& o = *operands(op)[i];
    if (!o.is_vector()) continue;
    if (have_len && o.length != op.total) {
      std::string lens;  // the lengths up to and including the first that differs
      for (int j = 0; j <= i; ++j) {
        const Operand& v = *operands(op)[j];
        if (!v.is_vector()) continue;
        lens += std::string(lens.empty() ? "" : ", ") + kNames[j] + " " + std::to_string(v.length);
      }
      program_error(core, pc, info.mnemonic, "vector operands have different lengths (" + lens + ")");
    }
    op.total = o.length;
    have_len = true;
  }
  // The SIMD width: the SW of fabric and circular operands, else the opcode's [0502].
  int sw = 0;
  for (int i = 0; i < 3; ++i) {
    const Operand& o = *operands(op)[i];
    if (o.sw == 0) continue;
    if (sw != 0 && o.sw != sw) {
      program_error(core, pc, info.mnemonic,
                    "operands ask for different SIMD widths (SW): " + std::to_string(sw) +
                        " and " + std::to_string(o.sw) + " (" + kNames[i] + ")");
    }
    sw = o.sw;
  }
  op.width = sw ? sw : info.simd;
  // A register destination takes one element per iteration so that accumulating into it
  // (src0 = dst = GPR) sees every element; sparse mode reads one index per element, and
  // so does an indexed memory vector (IX: one list entry read per element).
  if (op.dst.kind == OpndKind::gpr || op.src0.us || op.src1.us || op.colorset) op.width = 1;
  if (op.src0.ix != 0 || op.src1.ix != 0 || op.dst.ix != 0) op.width = 1;

  for (int i = 0; i < 3; ++i) {
    const Operand& o = *operands(op)[i];
    if (o.is_fabric() && o.ue) op.microthreaded = true;
  }
  // UT State entry: the fabric destination's UTID, else src0's, else src1's [0362].
  if (op.dst.is_fabric()) op.ut_entry = op.dst.utid;
  else if (op.src0.is_fabric()) op.ut_entry = op.src0.utid;
  else if (op.src1.is_fabric()) op.ut_entry = op.src1.utid;
  if (op.microthreaded && op.ut_entry >= core.cfg.microthreads) {
    program_error(core, pc, info.mnemonic,
                  "UTID " + std::to_string(op.ut_entry) + " names no microthread (this CE has " +
                      std::to_string(core.cfg.microthreads) + ")");
  }
  op.always_ready = true;
  for (const Operand* o : operands(op)) {
    if (o->is_fabric() || o->kind == OpndKind::circular) op.always_ready = false;
  }
  if (op.src0.kind == OpndKind::circular && same_dsr(op.src0, op.dst)) {
    program_error(core, pc, info.mnemonic, "an in-place operation over a circular buffer",
                  ErrorCategory::unsupported);
  }
  op.resolved = true;
}

Probe probe(const CeCore& core, const VectorOp& op) {
  Probe p;
  if (op.always_ready) {  // registers, immediates and plain memory are always there
    p.lanes = static_cast<int>(std::min<uint32_t>(static_cast<uint32_t>(op.width), op.total - op.done));
    return p;
  }
  for (int i = 0; i < 2; ++i) {
    if (term_pending(core, *operands(op)[i])) {
      p.term = true;
      return p;
    }
  }
  int lanes = static_cast<int>(std::min<uint32_t>(static_cast<uint32_t>(op.width), op.total - op.done));
  for (int i = 0; i < 3; ++i) {
    const Operand& o = *operands(op)[i];
    StallCause cause = StallCause::none;
    const int n = available(core, o, lanes, cause);
    if (n == 0 && lanes > 0) {
      p.cause = cause;
      p.color = o.is_fabric() ? o.queue : -1;
      p.operand = kNames[i];
      return p;
    }
    lanes = std::min(lanes, n);
  }
  p.lanes = lanes;
  return p;
}

bool iterate(CeCore& core, VectorOp& op, const Probe& p) {
  if (p.term) {
    // Term [0504]: the control wavelet at the head ends the instruction; it is consumed.
    for (int i = 0; i < 2; ++i) {
      Operand& o = *operands(op)[i];
      if (!term_pending(core, o)) continue;
      const fabric::Wavelet w = core.inq.pop(o.queue);
      if (o.cx) core.gpr[isa::kIndexGpr] = static_cast<uint16_t>(0xFFC0u | w.lower_index());
    }
    op.terminated = true;
    return true;
  }
  process_lanes(core, op, p.lanes);
  CeLiveStats& s = core.stats();
  ++s.iterations;
  s.element_ops += static_cast<uint64_t>(p.lanes);
  ++core.progress;
  return op.done >= op.total;
}

void process_lanes(CeCore& core, VectorOp& op, int lanes) {
  const isa::OpInfo& info = op.in.info();
  uint32_t a[4] = {}, b[4] = {}, r[4] = {};
  const IssueCtx at0{op.pc, info.mnemonic, "src0"}, at1{op.pc, info.mnemonic, "src1"},
      atd{op.pc, info.mnemonic, "dst"};
  // Fabric inputs first: sparse mode and CX update the index register that memory
  // operands with WLI read in the same iteration [0505], [0506].
  if (op.src0.kind == OpndKind::fabric_in) read_lanes(core, at0, op.src0, op.done, lanes, a);
  if (op.src1.kind == OpndKind::fabric_in) read_lanes(core, at1, op.src1, op.done, lanes, b);
  if (op.src0.kind != OpndKind::fabric_in && op.src0.kind != OpndKind::none)
    read_lanes(core, at0, op.src0, op.done, lanes, a);
  if (op.src1.kind != OpndKind::fabric_in && op.src1.kind != OpndKind::none)
    read_lanes(core, at1, op.src1, op.done, lanes, b);

  if (info.kind == Kind::vector) {
    const uint32_t c = (info.vop == isa::VecOp::fmac || info.vop == isa::VecOp::fmac_mixed)
                           ? fmac_scalar(core, info.src1)
                           : 0u;
    datapath::compute_lanes(info.vop, info.src1, info.dst, a, b, c, r,
                            static_cast<size_t>(lanes), core.fpc, core.rng);
    write_lanes(core, atd, op.dst, op.done, lanes, r);
  } else if (info.kind == Kind::compare) {
    for (int k = 0; k < lanes; ++k) op.flag = op.flag && datapath::compare(info.vop, info.src1, a[k], b[k]);
  } else if (op.colorset) {
    for (int k = 0; k < lanes; ++k) {
      apply_color_op(core, info.kind, color_set_of(core, op.pc, info.mnemonic, b[k], false));
    }
  }
  op.done += static_cast<uint32_t>(lanes);
}

void complete(CeCore& core, VectorOp& op) {
  for (Operand* o : operands(op)) {
    // AC: a microthreaded fabric vector acts on AC when done [0503] (Term too [0504]):
    // activate it, unblock it, or nothing, as its CA field says.
    if (o->is_fabric() && (o->ue || (op.terminated && o->kind == OpndKind::fabric_in && o->term))) {
      const fabric::ColorMask id = fabric::ColorMask{1} << o->ac;
      switch (o->ca) {
        case isa::Completion::activate: core.change_ids(IdChange::activate, id, IdCause::completion); break;
        case isa::Completion::unblock: core.change_ids(IdChange::unblock, id, IdCause::completion); break;
        case isa::Completion::none: break;
      }
    }
  }
  for (Operand* o : operands(op)) {
    if (!o->is_vector()) continue;
    uint64_t final_raw = o->issue_raw;
    if (o->kind == OpndKind::mem1d && o->sa) {
      // SA (save address): the descriptor continues where this operation stopped.
      const int64_t next = int64_t{o->base} + int64_t{op.done} * o->stride;
      final_raw = with_base(final_raw, static_cast<uint32_t>(next) & 0x7FFFu);
      rewrite_dsr(core, *o, final_raw);
    } else if (o->written) {
      rewrite_dsr(core, *o, final_raw);  // undo the suspension write-back [0609]
    }
  }
  if (op.in.info().kind == Kind::compare) core.flag = op.flag;
}

void write_back_progress(CeCore& core, VectorOp& op) {
  const uint32_t remaining = op.total - op.done;
  for (Operand* o : operands(op)) {
    if (o->kind != OpndKind::mem1d && !o->is_fabric()) continue;
    uint64_t raw = with_length(o->issue_raw, remaining);
    if (o->kind == OpndKind::mem1d && o->ix == 0) {  // (an indexed vector's Base stays)
      const int64_t next = int64_t{o->base} + int64_t{op.done} * o->stride;
      raw = with_base(raw, static_cast<uint32_t>(next) & 0x7FFFu);
    }
    if (rewrite_dsr(core, *o, raw)) {
      o->written_raw = raw;
      o->written = true;
    }
  }
}

std::string describe_stall(const Probe& p) {
  const std::string c = std::to_string(p.color);
  std::string s;
  switch (p.cause) {
    case StallCause::input_empty: s = "input queue of color " + c + " is empty"; break;
    case StallCause::output_full: s = "output queue of color " + c + " is full"; break;
    case StallCause::local_queue_full: s = "input queue of local color " + c + " is full"; break;
    case StallCause::fifo_empty: s = "FIFO is empty"; break;
    case StallCause::fifo_full: s = "FIFO is full"; break;
    case StallCause::ut_slot_busy: s = "its microthread entry is taken"; break;
    case StallCause::tensor_busy: s = "the tensor unit is busy"; break;
    case StallCause::none: return "ready";
  }
  return s + " (" + p.operand + ")";
}

}  // namespace wafersim::pe
