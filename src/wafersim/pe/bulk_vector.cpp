#include "wafersim/pe/bulk_vector.hpp"

#include <algorithm>
#include <cstring>

#include "wafersim/pe/bulk_lanes.hpp"
#include "wafersim/pe/datapath.hpp"

namespace wafersim::pe {

using isa::Kind;

namespace {

bool even_inside(const CeCore& core, int64_t lo, int64_t hi, int64_t parity, int bytes) {
  return lo >= 0 && hi + bytes <= static_cast<int64_t>(core.cfg.data_bytes()) &&
         (parity & 1) == 0;
}

int64_t index_offset(const CeCore& core, const Operand& o) {
  return o.wli ? core.gpr[isa::kIndexGpr] : 0;
}

// Every element of `o` from `first` to `last` is an even address inside data memory.
bool addresses_ok(const CeCore& core, const Operand& o, uint32_t first, uint32_t last) {
  switch (o.kind) {
    case OpndKind::none:
    case OpndKind::gpr:
    case OpndKind::imm: return true;
    case OpndKind::mem_gpr6:
    case OpndKind::mem_abs: {
      const int64_t a = o.kind == OpndKind::mem_abs ? o.addr : core.gpr[isa::kMemAddrGpr];
      return even_inside(core, a, a, a, o.bytes);
    }
    case OpndKind::mem1d: {
      if (o.ix != 0) return false;  // an indexed vector goes element by element
      const int64_t a0 = int64_t{o.base} + index_offset(core, o) + int64_t{first} * o.stride;
      const int64_t a1 = int64_t{o.base} + index_offset(core, o) + int64_t{last} * o.stride;
      return even_inside(core, std::min(a0, a1), std::max(a0, a1), a0 | o.stride, o.bytes);
    }
    case OpndKind::mem4d: {
      // All elements of the vector: the lowest and highest address each dimension reaches.
      const int64_t a = int64_t{o.base} + index_offset(core, o);
      int64_t lo = a, hi = a, parity = a;
      for (int d = 0; d < o.dims.n; ++d) {
        const int64_t reach = int64_t{o.dims.len[d] - 1} * o.dim_stride[d];
        lo += std::min<int64_t>(0, reach);
        hi += std::max<int64_t>(0, reach);
        parity |= o.dim_stride[d];
      }
      return even_inside(core, lo, hi, parity, o.bytes);
    }
    default: return false;  // fabric and circular operands go element by element
  }
}

// Registers the operation reads besides its register sources: the fmac scalar, the index
// register (WLI) and GPR6 (memory at GPR6).
bool writes_a_read_register(const Operand& dst) {
  if (dst.kind != OpndKind::gpr) return false;
  const int lo = dst.reg, hi = dst.reg + (dst.bytes == 4 ? 1 : 0);
  for (const int r : {isa::kFmacScalarGpr, isa::kFmacScalarGpr + 1, isa::kIndexGpr,
                      isa::kMemAddrGpr}) {
    if (r >= lo && r <= hi) return true;
  }
  return false;
}

bool fast_source(CeCore& core, const Operand& o, uint32_t first, BulkSource& s) {
  s.bytes = o.bytes;
  switch (o.kind) {
    case OpndKind::none: return true;
    case OpndKind::gpr:
      s.value = core.gpr[o.reg];
      if (o.bytes == 4) s.value |= static_cast<uint32_t>(core.gpr[o.reg + 1]) << 16;
      return true;
    case OpndKind::imm:
      s.value = o.value;
      return !o.prn;  // pseudo-random numbers: the general loop draws them
    case OpndKind::mem1d:
      s.mem = core.mem.data() + o.base + index_offset(core, o) + int64_t{first} * o.stride;
      s.stride = o.stride;
      return true;
    default: return false;
  }
}

// The common case in a loop of its own: a vector instruction writing a 1D memory vector
// from 1D memory vectors, registers and immediates. Each iteration reads all its lanes
// before it writes any, as iterate() does, so a destination overlapping a source sees the
// same values.
bool fast_iterations(CeCore& core, VectorOp& op, uint64_t iterations) {
  const isa::OpInfo& info = op.in.info();
  if (info.kind != Kind::vector || op.dst.kind != OpndKind::mem1d) {
    return false;
  }
  BulkSource a, b;
  if (!fast_source(core, op.src0, op.done, a) || !fast_source(core, op.src1, op.done, b)) {
    return false;
  }
  uint8_t* d = core.mem.data() + op.dst.base + index_offset(core, op.dst) +
               int64_t{op.done} * op.dst.stride;
  const int64_t dstride = op.dst.stride;
  const int dbytes = op.dst.bytes;
  uint32_t c = 0;
  if (info.vop == isa::VecOp::fmac || info.vop == isa::VecOp::fmac_mixed) {
    c = core.gpr[isa::kFmacScalarGpr];
    if (info.src1 == isa::Elem::fp32) {
      c |= static_cast<uint32_t>(core.gpr[isa::kFmacScalarGpr + 1]) << 16;
    }
  }
  const int w = op.width;
  const uint64_t elements = iterations * static_cast<uint64_t>(w);
  if (bulk_lanes(info.vop, info.src1, info.dst, a, b, c, BulkDest{d, dstride, dbytes}, elements,
                 core.fpc, core.rng)) {
    op.done += static_cast<uint32_t>(elements);
    return true;
  }
  uint32_t r[4];
  int64_t e = 0;
  for (uint64_t it = 0; it < iterations; ++it, e += w) {
    for (int k = 0; k < w; ++k) {
      r[k] = datapath::compute(info.vop, info.src1, info.dst, a.at(e + k), b.at(e + k), c,
                               core.fpc, core.rng);
    }
    for (int k = 0; k < w; ++k) {
      uint8_t* p = d + (e + k) * dstride;
      if (dbytes == 4) {
        std::memcpy(p, &r[k], 4);
      } else {
        const uint16_t v = static_cast<uint16_t>(r[k]);
        std::memcpy(p, &v, 2);
      }
    }
  }
  op.done += static_cast<uint32_t>(iterations * static_cast<uint64_t>(w));
  return true;
}

}  // namespace

bool bulk_eligible(const CeCore& core, const VectorOp& op) {
  const Kind kind = op.in.info().kind;
  if ((kind != Kind::vector && kind != Kind::compare) || op.colorset || !op.always_ready ||
      op.done >= op.total || writes_a_read_register(op.dst)) {
    return false;
  }
  const uint32_t last = op.total - 1;
  return addresses_ok(core, op.src0, op.done, last) && addresses_ok(core, op.src1, op.done, last) &&
         addresses_ok(core, op.dst, op.done, last);
}

void bulk_iterations(CeCore& core, VectorOp& op, uint64_t iterations) {
  if (fast_iterations(core, op, iterations)) return;
  for (uint64_t it = 0; it < iterations; ++it) process_lanes(core, op, op.width);
}

}  // namespace wafersim::pe
