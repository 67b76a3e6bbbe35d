#include "wafersim/pe/dsd.hpp"

#include "wafersim/pe/isa.hpp"

namespace wafersim::pe {

const char* dsr_set_name(DsrSet s) {
  switch (s) {
    case DsrSet::s0: return "S0";
    case DsrSet::s1: return "S1";
    case DsrSet::d: return "D";
  }
  return "?";
}

namespace {
template <typename F>
uint32_t u(const F& f, uint64_t raw) { return static_cast<uint32_t>(f.get(raw)); }
template <typename F>
uint8_t b8(const F& f, uint64_t raw) { return static_cast<uint8_t>(f.get(raw)); }
template <typename F>
bool bit(const F& f, uint64_t raw) { return f.get(raw) != 0; }
}  // namespace

FabricIn unpack_fabric_in(uint64_t r) {
  namespace F = isa::fabric_in;
  FabricIn d{};
  d.length = u(F::length, r);
  d.utid = b8(F::utid, r);
  d.sw_code = b8(F::sw, r);
  d.ac = b8(F::ac, r);
  d.ca = b8(F::ca, r);
  d.ch = b8(F::ch, r);
  d.ue = bit(F::ue, r);
  d.term = bit(F::term, r);
  d.cx = bit(F::cx, r);
  d.us = bit(F::us, r);
  d.sc = bit(F::sc, r);
  d.sq = bit(F::sq, r);
  d.ss = bit(F::ss, r);
  d.sa = bit(F::sa, r);
  return d;
}

FabricOut unpack_fabric_out(uint64_t r) {
  namespace F = isa::fabric_out;
  FabricOut d{};
  d.length = u(F::length, r);
  d.utid = b8(F::utid, r);
  d.sw_code = b8(F::sw, r);
  d.ac = b8(F::ac, r);
  d.ca = b8(F::ca, r);
  d.color = b8(F::color, r);
  // Index 2128 = Index Low 2128.1 concatenated with Index High 2128.2, high on top [0516].
  d.index6 = static_cast<uint8_t>((b8(F::index_high, r) << 3) | b8(F::index_low, r));
  d.ue = bit(F::ue, r);
  d.c = bit(F::c, r);
  d.ss = bit(F::ss, r);
  d.sa = bit(F::sa, r);
  d.wli = bit(F::wli, r);
  return d;
}

Mem1D unpack_mem1d(uint64_t r) {
  namespace F = isa::mem1d;
  Mem1D d{};
  d.length = u(F::length, r);
  d.base = u(F::base, r);
  d.stride = static_cast<int32_t>(sign_extend(F::stride.get(r), F::stride.width()));
  d.ix = b8(F::ix, r);
  d.ss = bit(F::ss, r);
  d.sa = bit(F::sa, r);
  d.wli = bit(F::wli, r);
  return d;
}

Mem4D unpack_mem4d(uint64_t r) {
  namespace F = isa::mem4d;
  Mem4D d{};
  d.length24 = u(F::length_low, r) | (u(F::length_high, r) << F::length_low.width());
  d.base = u(F::base, r);
  d.ss = bit(F::ss, r);
  d.sa = bit(F::sa, r);
  d.wli = bit(F::wli, r);
  return d;
}

Circular unpack_circular(uint64_t r) {
  namespace F = isa::circular;
  Circular d{};
  d.length = u(F::length, r);
  d.base = u(F::base, r);
  d.sw_code = b8(F::sw, r);
  d.fw = bit(F::fw, r);
  d.ss = bit(F::ss, r);
  d.sa = bit(F::sa, r);
  d.wli = bit(F::wli, r);
  return d;
}

XCircular unpack_xcircular(uint64_t r) {
  namespace F = isa::xcircular;
  XCircular d{};
  d.start = u(F::start, r);
  d.end = u(F::end, r);
  d.push_color = b8(F::push_color, r);
  d.pop_color = b8(F::pop_color, r);
  d.fifo = bit(F::fifo, r);
  d.push_en = bit(F::push_en, r);
  d.pop_en = bit(F::pop_en, r);
  return d;
}

X4D unpack_x4d(uint64_t r) {
  namespace F = isa::x4d;
  X4D d{};
  d.dims = u(F::dims, r);
  d.df = b8(F::df, r);
  d.sel1 = b8(F::sel1, r);
  d.sel2 = b8(F::sel2, r);
  d.sel3 = b8(F::sel3, r);
  d.sel4 = b8(F::sel4, r);
  d.stride = static_cast<int32_t>(sign_extend(F::stride.get(r), F::stride.width()));
  return d;
}

uint64_t with_length(uint64_t raw, uint32_t length) {
  // Length occupies bits 14:0 in the fabric, 1D and circular layouts alike.
  static_assert(isa::fabric_in::length.lo == 0 && isa::fabric_out::length.lo == 0 &&
                isa::mem1d::length.lo == 0 && isa::circular::length.lo == 0);
  return isa::mem1d::length.put(raw, length);
}

uint64_t with_base(uint64_t raw, uint32_t base) {
  static_assert(isa::mem1d::base.lo == isa::circular::base.lo &&
                isa::mem1d::base.hi == isa::circular::base.hi);
  return isa::mem1d::base.put(raw, base);
}

uint64_t with_fw(uint64_t raw, bool fw) { return isa::circular::fw.put(raw, fw ? 1 : 0); }

bool split_dims(uint32_t length24, uint8_t df, Dims4& out) {
  out = Dims4{};
  out.n = 0;
  uint32_t value = 0;
  int nibbles = 0;
  for (int i = 0; i < 6; ++i) {
    value |= ((length24 >> (4 * i)) & 0xFu) << (4 * nibbles);
    ++nibbles;
    const bool boundary = i == 5 || ((df >> i) & 1u);
    if (boundary) {
      if (out.n == 4) return false;
      out.len[out.n++] = value;
      value = 0;
      nibbles = 0;
    }
  }
  return true;
}

}  // namespace wafersim::pe
