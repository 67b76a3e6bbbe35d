#include "wafersim/pe/operand.hpp"

#include <algorithm>

#include "wafersim/numerics/convert.hpp"
#include "wafersim/pe/ce_errors.hpp"
#include "wafersim/pe/isa.hpp"

namespace wafersim::pe {

using isa::Elem;

const char* operand_kind_name(OpndKind k) {
  switch (k) {
    case OpndKind::none: return "none";
    case OpndKind::gpr: return "register";
    case OpndKind::imm: return "immediate";
    case OpndKind::mem_gpr6: return "memory at GPR6";
    case OpndKind::mem_abs: return "memory";
    case OpndKind::mem1d: return "1D memory vector";
    case OpndKind::mem4d: return "4D memory vector";
    case OpndKind::circular: return "circular buffer";
    case OpndKind::fabric_in: return "fabric input";
    case OpndKind::fabric_out: return "fabric output";
  }
  return "?";
}

namespace {

int elem_bytes(Elem e) { return (e == Elem::fp32 || e == Elem::i32) ? 4 : 2; }

[[noreturn]] void bad(const CeCore& core, const IssueCtx& at, const std::string& what,
                      ErrorCategory cat = ErrorCategory::usage) {
  program_error(core, at.pc, at.mnemonic, std::string(at.operand) + ": " + what, cat);
}

std::string dsr_label(DsrSet set, int n) {
  return std::string(dsr_set_name(set)) + "[" + std::to_string(n) + "]";
}

// Checks one element access against the data memory and returns the address.
uint32_t checked(const CeCore& core, const IssueCtx& at, int64_t addr, int bytes) {
  const uint32_t limit = core.cfg.data_bytes();
  if (addr < 0 || addr + bytes > static_cast<int64_t>(limit)) {
    memory_error(core, at.pc, at.mnemonic,
                 std::string(at.operand) + " address " + std::to_string(addr) +
                     " is outside data memory [0, " + std::to_string(limit) + ")");
  }
  if (addr % 2) {
    memory_error(core, at.pc, at.mnemonic,
                 std::string(at.operand) + " address " + std::to_string(addr) +
                     " is odd: memory is accessed two bytes at a time [0579]");
  }
  return static_cast<uint32_t>(addr);
}

uint32_t index_offset(const CeCore& core, bool wli) {
  return wli ? core.gpr[isa::kIndexGpr] : 0u;  // WLI: the index register GPR4 [0524]
}

// CA: activate, unblock or nothing; the fourth code is reserved.
isa::Completion completion(const CeCore& core, const IssueCtx& at, uint8_t ca) {
  if (ca >= isa::kCompletions) {
    bad(core, at, "completion action (CA) " + std::to_string(ca) +
                      " is reserved: use 0 (activate AC), 1 (unblock AC) or 2 (none) [0503]");
  }
  return static_cast<isa::Completion>(ca);
}

void resolve_fabric(const CeCore& core, const IssueCtx& at, Operand& o, uint64_t raw,
                    int task_color) {
  if (o.role == Role::source) {
    const FabricIn f = unpack_fabric_in(raw);
    o.kind = OpndKind::fabric_in;
    o.length = f.length;
    o.utid = f.utid;
    o.ue = f.ue;
    o.ac = f.ac;
    o.ca = completion(core, at, f.ca);
    o.term = f.term;
    o.cx = f.cx;
    o.us = f.us;
    o.sw = simd_width(f.sw_code);
    if (f.ss) bad(core, at, "SS (single step) is not modelled", ErrorCategory::unsupported);
    // Queue: the current task's color, or Input Q[UTID] (SQ), or color CH:UTID (SC) [0510].
    if (f.sq && f.sc) bad(core, at, "fabric input sets both SC and SQ");
    o.queue = f.sq ? f.utid : f.sc ? ((f.ch << 3) | f.utid) : task_color;
    if (o.us && o.sw != 1) bad(core, at, "sparse mode (US) needs SIMD width 1 (SW = 0)");
  } else {
    const FabricOut f = unpack_fabric_out(raw);
    o.kind = OpndKind::fabric_out;
    o.length = f.length;
    o.utid = f.utid;
    o.ue = f.ue;
    o.ac = f.ac;
    o.ca = completion(core, at, f.ca);
    o.ctrl = f.c;
    o.wli = f.wli;
    o.index6 = f.index6;
    o.queue = f.color;
    o.sw = simd_width(f.sw_code);
    if (f.ss) bad(core, at, "SS (single step) is not modelled", ErrorCategory::unsupported);
  }
  if (o.sw == 0) bad(core, at, "SW code 3 is not a SIMD width (0, 1, 2 mean 1, 2, 4)");
}

void resolve_4d(const CeCore& core, const IssueCtx& at, Operand& o, uint64_t raw, uint64_t xraw,
                int type) {
  const Mem4D d = unpack_mem4d(raw);
  const X4D x = unpack_x4d(xraw);
  if (d.ss) bad(core, at, "SS (single step) is not modelled", ErrorCategory::unsupported);
  if (d.sa) bad(core, at, "SA on a 4D vector is not modelled", ErrorCategory::unsupported);
  o.kind = OpndKind::mem4d;
  o.base = d.base;
  o.wli = d.wli;
  if (!split_dims(d.length24, x.df, o.dims)) {
    bad(core, at, "DF " + hex(x.df) + " of XDSR " + std::to_string(type) +
                      " marks more than four dimensions [0547]");
  }
  uint64_t n = 1;
  for (int i = 0; i < o.dims.n; ++i) n *= o.dims.len[i];
  o.length = static_cast<uint32_t>(n);
  // Select Stride: 0 = unit stride (one element), 1 = Stride 2245, 2..7 = stride
  // register [0548]-[0550]; strides count bytes like the 1D Stride [0525].
  const uint8_t sel[4] = {x.sel1, x.sel2, x.sel3, x.sel4};
  for (int i = 0; i < 4; ++i) {
    if (sel[i] == 0) {
      o.dim_stride[i] = o.bytes;
    } else if (sel[i] == 1) {
      o.dim_stride[i] = x.stride;
    } else {
      o.dim_stride[i] = static_cast<int32_t>(
          sign_extend(core.dsr.stride_reg(sel[i]), isa::kStrideRegisterBits));
    }
  }
}

void resolve_circular(const CeCore& core, const IssueCtx& at, Operand& o, uint64_t raw,
                      uint64_t xraw, int type, int n) {
  const Circular c = unpack_circular(raw);
  const XCircular x = unpack_xcircular(xraw);
  if (c.ss) bad(core, at, "SS (single step) is not modelled", ErrorCategory::unsupported);
  o.kind = OpndKind::circular;
  o.length = c.length;
  o.sw = simd_width(c.sw_code);
  if (o.sw == 0) bad(core, at, "SW code 3 is not a SIMD width");
  o.start = x.start;
  o.end = x.end;
  o.fifo = x.fifo;
  o.push_en = x.push_en;
  o.pop_en = x.pop_en;
  o.push_color = x.push_color;
  o.pop_color = x.pop_color;
  const std::string xname = "XDSR " + std::to_string(type);
  if (x.end <= x.start || x.end > core.cfg.data_bytes() || (x.end - x.start) % o.bytes ||
      x.start % 2) {
    bad(core, at, xname + " describes an empty, misaligned or out-of-memory buffer [start " +
                      std::to_string(x.start) + ", end " + std::to_string(x.end) + ")");
  }
  if (c.base < x.start || c.base >= x.end || (c.base - x.start) % o.bytes) {
    bad(core, at, "circular-buffer pointer " + std::to_string(c.base) + " is not an element of [" +
                      std::to_string(x.start) + ", " + std::to_string(x.end) + ")");
  }
  if (!o.fifo) return;
  // FIFOs: the write pointer lives in DDSR8-11, the read pointer in S1DSR8-11 [0541].
  const bool ok_reg = n >= isa::kFirstFifoDsr && n <= isa::kLastFifoDsr &&
                      ((o.role == Role::dest && o.set == DsrSet::d) ||
                       (o.role == Role::source && o.set == DsrSet::s1));
  if (!ok_reg) {
    bad(core, at, "a FIFO is written through DDSR8-11 and read through S1DSR8-11 [0541], not " +
                      std::string(o.role == Role::dest ? "written through " : "read through ") +
                      dsr_label(o.set, n));
  }
  const DsrSet partner = o.set == DsrSet::d ? DsrSet::s1 : DsrSet::d;
  const uint64_t praw = core.dsr.dsr(partner, n);
  if (dsd_type(praw) != type) {
    bad(core, at, "FIFO partner " + dsr_label(partner, n) +
                      " must describe the same circular buffer (type " + std::to_string(type) +
                      ") [0541]");
  }
}

// IX (wafersim's extension for weight sparsity): the vector's elements lie at Base plus the
// byte offsets of a u16 index list whose address stride register SR[IX] holds, entry k at
// SR[IX] + k Stride (so a list can interleave with the values it indexes); WLI moves the
// list (not Base) by GPR4, so one descriptor serves the list of every row.
void resolve_index_list(const CeCore& core, const IssueCtx& at, Operand& o, const Mem1D& m) {
  if (m.ix < isa::kFirstStrideReg) {
    bad(core, at, "IX " + std::to_string(m.ix) +
                      " names no stride register: use 0 (no index list) or 2..7 (SR[IX] holds "
                      "the index list's address)");
  }
  if (m.stride % 2 != 0) {
    bad(core, at, "an indexed 1D vector (IX " + std::to_string(m.ix) + ") steps through its "
                      "u16 index list by Stride bytes: Stride must be even, got " +
                      std::to_string(m.stride));
  }
  if (m.sa) bad(core, at, "SA on an indexed 1D vector is not modelled", ErrorCategory::unsupported);
  o.ix = m.ix;
  o.ix_list = core.dsr.stride_reg(m.ix) & kStrideMask;
}

}  // namespace

Operand gpr_operand(const CeCore& core, const IssueCtx& at, int reg, Elem elem, Role role) {
  Operand o;
  o.kind = OpndKind::gpr;
  o.role = role;
  o.elem = elem;
  o.bytes = static_cast<uint8_t>(elem_bytes(elem));
  o.reg = static_cast<uint8_t>(reg);
  if (o.bytes == 4 && (reg % 2 || reg > isa::kGprs - 2)) {
    bad(core, at, "a 32-bit register operand is an even pair GPR[n]:GPR[n+1], got GPR" +
                      std::to_string(reg));
  }
  return o;
}

uint32_t imm_value(int code, Elem elem) {
  if (elem == Elem::fp16) return isa::kFpImm16[code];
  if (elem == Elem::fp32) return isa::kFpImm32[code];
  if (elem == Elem::i32) {
    return static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(isa::kIntImm[code])));
  }
  return isa::kIntImm[code];
}

Operand imm_operand(const CeCore&, const IssueCtx&, int code, Elem elem) {
  Operand o;
  o.kind = OpndKind::imm;
  o.elem = elem;
  o.bytes = static_cast<uint8_t>(elem_bytes(elem));
  if (code == isa::kImmPrn) {
    o.prn = true;
  } else {
    o.value = imm_value(code, elem);
  }
  return o;
}

Operand mem_gpr6_operand(Elem elem) {
  Operand o;
  o.kind = OpndKind::mem_gpr6;
  o.elem = elem;
  o.bytes = static_cast<uint8_t>(elem_bytes(elem));
  return o;
}

Operand mem_abs_operand(uint32_t addr, Elem elem) {
  Operand o = mem_gpr6_operand(elem);
  o.kind = OpndKind::mem_abs;
  o.addr = addr;
  return o;
}

Operand dsr_operand(const CeCore& core, const IssueCtx& at, DsrSet set, int n, Elem elem,
                    Role role, int task_color) {
  if (n >= isa::kDsrsPerSet) {
    bad(core, at, dsr_label(set, n) + " does not exist: there are " +
                      std::to_string(isa::kDsrsPerSet) + " DSRs per set [0355]");
  }
  Operand o;
  o.role = role;
  o.elem = elem;
  o.bytes = static_cast<uint8_t>(elem_bytes(elem));
  o.reg = static_cast<uint8_t>(n);
  o.set = set;
  const uint64_t raw = core.dsr.dsr(set, n);
  o.issue_raw = raw;
  const int type = dsd_type(raw);
  if (type == 0) {
    resolve_fabric(core, at, o, raw, task_color);
  } else if (type == 1) {
    const Mem1D m = unpack_mem1d(raw);
    if (m.ss) bad(core, at, "SS (single step) is not modelled", ErrorCategory::unsupported);
    o.kind = OpndKind::mem1d;
    o.length = m.length;
    o.base = m.base;
    o.stride = m.stride;
    o.wli = m.wli;
    o.sa = m.sa;
    if (m.ix != 0) resolve_index_list(core, at, o, m);
  } else {
    const uint64_t xraw = core.dsr.xdsr(type);
    if (isa::kXdsdType.get(xraw) == 0) {
      resolve_4d(core, at, o, raw, xraw, type);
    } else {
      resolve_circular(core, at, o, raw, xraw, type, n);
    }
  }
  return o;
}

namespace {

uint32_t fifo_count(const CeCore& core, const Operand& o) {
  const DsrSet partner = o.set == DsrSet::d ? DsrSet::s1 : DsrSet::d;
  const Circular self = unpack_circular(core.dsr.dsr(o.set, o.reg));
  const Circular other = unpack_circular(core.dsr.dsr(partner, o.reg));
  const Circular& rd = o.set == DsrSet::s1 ? self : other;
  const Circular& wr = o.set == DsrSet::s1 ? other : self;
  const uint32_t cap_bytes = o.end - o.start;
  // [0542]: equal pointers with different wrap bits = full, with equal bits = empty.
  if (rd.base == wr.base) return rd.fw != wr.fw ? cap_bytes / o.bytes : 0;
  // Pointers a program moved outside the buffer give a meaningless but bounded count.
  const uint32_t n = ((wr.base + cap_bytes - rd.base) % cap_bytes) / o.bytes;
  return std::min(n, cap_bytes / o.bytes);
}

}  // namespace

bool term_pending(const CeCore& core, const Operand& o) {
  return o.kind == OpndKind::fabric_in && o.term && !core.inq.empty(o.queue) &&
         core.inq.front(o.queue).ctrl;
}

int available(const CeCore& core, const Operand& o, int want, StallCause& cause) {
  switch (o.kind) {
    case OpndKind::fabric_in: {
      const int pw = o.per_wavelet();
      const int need = (want + pw - 1) / pw;
      const int n = std::min(core.inq.size(o.queue), need);
      int data = 0;
      while (data < n && !(o.term && core.inq.at(o.queue, data).ctrl)) ++data;
      if (data == 0) cause = StallCause::input_empty;
      return std::min(want, data * pw);
    }
    case OpndKind::fabric_out: {
      const int pw = o.per_wavelet();
      const int space =
          core.is_local(o.queue) ? core.inq.space(o.queue) : core.outq.space(o.queue);
      if (space == 0) cause = core.is_local(o.queue) ? StallCause::local_queue_full
                                                     : StallCause::output_full;
      return std::min(want, space * pw);
    }
    case OpndKind::circular: {
      if (!o.fifo) return want;
      const uint32_t count = fifo_count(core, o);
      const uint32_t cap = (o.end - o.start) / o.bytes;
      const uint32_t n = o.role == Role::source ? count : cap - count;
      if (n == 0) cause = o.role == Role::source ? StallCause::fifo_empty : StallCause::fifo_full;
      return static_cast<int>(std::min<uint32_t>(static_cast<uint32_t>(want), n));
    }
    default: return want;
  }
}

namespace {

uint32_t gpr_read(const CeCore& core, const Operand& o, int reg) {
  if (o.bytes == 4) return core.gpr[reg] | (static_cast<uint32_t>(core.gpr[reg + 1]) << 16);
  return core.gpr[reg];
}

uint32_t prn_value(CeCore& core, Elem e) {
  const int r = core.fpc.rng;
  switch (e) {
    case Elem::fp16:  // uniform on [0, 1) in steps of 2^-10, exact in fp16
      return numerics::fp32_to_fp16_rne(static_cast<float>(core.rng.next_bits(r, 10)) / 1024.0f);
    case Elem::fp32:  // uniform on [0, 1) in steps of 2^-23
      return numerics::float_bits(static_cast<float>(core.rng.next_bits(r, 23)) / 8388608.0f);
    case Elem::i32: return core.rng.next_bits(r, 32);
    default: return core.rng.next_bits(r, 16);
  }
}

// Address of element e of a memory vector (1D or 4D).
int64_t vector_address(CeCore& core, const IssueCtx& at, const Operand& o, uint32_t e) {
  const int64_t idx = index_offset(core, o.wli);
  if (o.kind == OpndKind::mem1d && o.ix != 0) {  // IX: Base + the element's list entry
    const uint32_t entry = checked(core, at, int64_t{o.ix_list} + idx + int64_t{e} * o.stride, 2);
    return int64_t{o.base} + static_cast<int64_t>(core.mem.read_le(entry, 2));
  }
  if (o.kind == OpndKind::mem1d) return int64_t{o.base} + idx + int64_t{e} * o.stride;
  int64_t a = int64_t{o.base} + idx;
  uint32_t rest = e;
  for (int d = 0; d < o.dims.n; ++d) {
    const uint32_t len = o.dims.len[d];
    a += int64_t{rest % len} * o.dim_stride[d];
    rest /= len;
  }
  return a;
}

// The address of element `first` of a 1D memory vector when elements first..first+lanes-1
// all lie, even, inside data memory (then no element needs its own check), else -1.
int64_t mem1d_run(const CeCore& core, const Operand& o, uint32_t first, int lanes) {
  if (o.ix != 0) return -1;  // an indexed vector: element by element
  const int64_t a0 = int64_t{o.base} + index_offset(core, o.wli) + int64_t{first} * o.stride;
  const int64_t a1 = a0 + int64_t{lanes - 1} * o.stride;
  const int64_t limit = core.cfg.data_bytes();
  if (std::min(a0, a1) < 0 || std::max(a0, a1) + o.bytes > limit || ((a0 | o.stride) & 1) != 0) {
    return -1;
  }
  return a0;
}

// The next element of a circular buffer: returns its address and advances the live
// pointer in the DSR, wrapping to Start and toggling FW at End [0534], [0538].
uint32_t circular_next(CeCore& core, const IssueCtx& at, const Operand& o) {
  uint64_t& raw = core.dsr.dsr(o.set, o.reg);
  Circular c = unpack_circular(raw);
  const uint32_t addr = checked(core, at, c.base, o.bytes);
  uint32_t next = c.base + o.bytes;
  bool fw = c.fw;
  if (next >= o.end) {
    next = o.start;
    fw = !fw;
  }
  raw = with_fw(with_base(raw, next), fw);
  return addr;
}

}  // namespace

void read_lanes(CeCore& core, const IssueCtx& at, Operand& o, uint32_t first, int lanes,
                uint32_t* out) {
  switch (o.kind) {
    case OpndKind::gpr:
      for (int k = 0; k < lanes; ++k) out[k] = gpr_read(core, o, o.reg);
      return;
    case OpndKind::imm:
      for (int k = 0; k < lanes; ++k) out[k] = o.prn ? prn_value(core, o.elem) : o.value;
      return;
    case OpndKind::mem_gpr6:
    case OpndKind::mem_abs: {
      const int64_t a = o.kind == OpndKind::mem_abs ? o.addr : core.gpr[isa::kMemAddrGpr];
      const uint32_t addr = checked(core, at, a, o.bytes);
      for (int k = 0; k < lanes; ++k) out[k] = static_cast<uint32_t>(core.mem.read_le(addr, o.bytes));
      return;
    }
    case OpndKind::mem1d:
    case OpndKind::mem4d:
      if (const int64_t a = o.kind == OpndKind::mem1d ? mem1d_run(core, o, first, lanes) : -1;
          a >= 0) {
        for (int k = 0; k < lanes; ++k) {
          out[k] = static_cast<uint32_t>(core.mem.read_le(static_cast<uint32_t>(a + k * o.stride), o.bytes));
        }
        return;
      }
      for (int k = 0; k < lanes; ++k) {
        const uint32_t addr = checked(core, at, vector_address(core, at, o, first + k), o.bytes);
        out[k] = static_cast<uint32_t>(core.mem.read_le(addr, o.bytes));
      }
      return;
    case OpndKind::circular:
      for (int k = 0; k < lanes; ++k) {
        out[k] = static_cast<uint32_t>(core.mem.read_le(circular_next(core, at, o), o.bytes));
      }
      if (o.fifo && o.pop_en && lanes > 0) core.activate_id(o.pop_color, IdCause::fifo);  // [0540]
      return;
    case OpndKind::fabric_in: {
      int k = 0;
      while (k < lanes) {
        const fabric::Wavelet w = core.inq.pop(o.queue);
        // CX: a control wavelet sets bits 15:6 of the index register [0505]; the low six
        // bits keep the wavelet's task selector.
        if (o.cx && w.ctrl) core.gpr[isa::kIndexGpr] = static_cast<uint16_t>(0xFFC0u | w.lower_index());
        // Sparse mode: the element's index drives WLI addressing [0506], [0524].
        if (o.us) core.gpr[isa::kIndexGpr] = w.index;
        if (o.bytes == 4) {
          out[k++] = w.data;
        } else {
          out[k++] = w.data_lo();
          if (o.per_wavelet() == 2 && k < lanes) out[k++] = w.data_hi();
        }
      }
      return;
    }
    default: internal_error("read_lanes: operand kind has no source form");
  }
}

void write_lanes(CeCore& core, const IssueCtx& at, Operand& o, uint32_t first, int lanes,
                 const uint32_t* in) {
  switch (o.kind) {
    case OpndKind::gpr:
      if (lanes == 0) return;
      core.gpr[o.reg] = static_cast<uint16_t>(in[lanes - 1]);
      if (o.bytes == 4) core.gpr[o.reg + 1] = static_cast<uint16_t>(in[lanes - 1] >> 16);
      return;
    case OpndKind::mem1d:
    case OpndKind::mem4d:
      if (const int64_t a = o.kind == OpndKind::mem1d ? mem1d_run(core, o, first, lanes) : -1;
          a >= 0) {
        for (int k = 0; k < lanes; ++k) {
          core.mem.write_le(static_cast<uint32_t>(a + k * o.stride), o.bytes, in[k]);
        }
        return;
      }
      for (int k = 0; k < lanes; ++k) {
        const uint32_t addr = checked(core, at, vector_address(core, at, o, first + k), o.bytes);
        core.mem.write_le(addr, o.bytes, in[k]);
      }
      return;
    case OpndKind::circular:
      for (int k = 0; k < lanes; ++k) core.mem.write_le(circular_next(core, at, o), o.bytes, in[k]);
      if (o.fifo && o.push_en && lanes > 0) core.activate_id(o.push_color, IdCause::fifo);  // [0540]
      return;
    case OpndKind::fabric_out: {
      // Index: the index register (WLI) or Index 2128 zero-extended [0518]; an index
      // register with bits 15:6 all ones makes control wavelets [0505].
      const uint16_t index = o.wli ? core.gpr[isa::kIndexGpr] : o.index6;
      const bool ctrl = o.ctrl || (o.wli && (index & 0xFFC0u) == 0xFFC0u);
      int k = 0;
      while (k < lanes) {
        fabric::Wavelet w;
        w.color = static_cast<uint8_t>(o.queue);
        w.ctrl = ctrl;
        w.index = index;
        w.injected_cycle = static_cast<uint32_t>(core.cycle);
        if (o.bytes == 4) {
          w.data = in[k++];
        } else {
          w.data = in[k++] & 0xFFFFu;
          if (o.per_wavelet() == 2 && k < lanes) w.data |= (in[k++] & 0xFFFFu) << 16;
        }
        if (core.is_local(o.queue)) {
          core.deliver_local(w);
        } else {
          core.outq.push(o.queue, w);
        }
      }
      return;
    }
    default:
      program_error(core, at.pc, at.mnemonic,
                    std::string(at.operand) + ": a " + operand_kind_name(o.kind) +
                        " cannot be a destination");
  }
}

}  // namespace wafersim::pe
