// Data structure descriptors [0495]-[0551]: the raw DSR/XDSR/stride register files
// [0355] and decoded views of each descriptor kind. Field positions come from the
// generated isa_tables.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "wafersim/pe/isa_tables.hpp"

namespace wafersim::pe {

enum class DsrSet : uint8_t { s0, s1, d };
const char* dsr_set_name(DsrSet s);  // "S0", "S1", "D"

inline constexpr uint64_t kDsrMask = (uint64_t{1} << 48) - 1;
inline constexpr uint64_t kXdsrMask = (uint64_t{1} << 51) - 1;
inline constexpr uint16_t kStrideMask = (1u << 15) - 1;

// 12 S0, 12 S1 and 12 D DSRs of 48 bits, six XDSRs of 51 bits and six stride registers of
// 15 bits [0355]. XDSRs and stride registers are numbered 2..7 as descriptor Type and
// Select Stride name them [0549], [0576].
struct DsrFile {
  std::array<uint64_t, isa::kDsrsPerSet> s0{}, s1{}, d{};
  std::array<uint64_t, 6> x{};
  std::array<uint16_t, 6> stride{};

  uint64_t& dsr(DsrSet set, int n) {
    return set == DsrSet::s0 ? s0[n] : set == DsrSet::s1 ? s1[n] : d[n];
  }
  uint64_t dsr(DsrSet set, int n) const {
    return set == DsrSet::s0 ? s0[n] : set == DsrSet::s1 ? s1[n] : d[n];
  }
  uint64_t& xdsr(int n) { return x[n - isa::kFirstXdsr]; }
  uint64_t xdsr(int n) const { return x[n - isa::kFirstXdsr]; }
  uint16_t& stride_reg(int n) { return stride[n - isa::kFirstStrideReg]; }
  uint16_t stride_reg(int n) const { return stride[n - isa::kFirstStrideReg]; }
};

// What a descriptor describes [0576]-[0577].
enum class DsdKind : uint8_t { fabric, mem1d, mem4d, circular };

inline int dsd_type(uint64_t raw) { return static_cast<int>(isa::kDsdType.get(raw)); }

struct FabricIn {  // FIG. 21A
  uint32_t length;
  uint8_t utid, sw_code, ac, ca, ch;  // ca: completion action (isa::Completion)
  bool ue, term, cx, us, sc, sq, ss, sa;
};
struct FabricOut {  // FIG. 21B
  uint32_t length;
  uint8_t utid, sw_code, ac, ca, color, index6;
  bool ue, c, ss, sa, wli;
};
struct Mem1D {  // FIG. 21C
  uint32_t length, base;
  int32_t stride;  // bytes, signed 9 bits
  uint8_t ix;      // index list in SR[ix] (2..7), 0 = none: wafersim's extension, bits 44:42
  bool ss, sa, wli;
};
struct Mem4D {  // FIG. 21D
  uint32_t length24, base;
  bool ss, sa, wli;
};
struct Circular {  // FIG. 21E
  uint32_t length, base;
  uint8_t sw_code;
  bool fw, ss, sa, wli;
};
struct XCircular {  // FIG. 22A
  uint32_t start, end;
  uint8_t push_color, pop_color;
  bool fifo, push_en, pop_en;
};
struct X4D {  // FIG. 22B
  uint32_t dims;
  uint8_t df, sel1, sel2, sel3, sel4;
  int32_t stride;  // bytes, signed 15 bits
};

FabricIn unpack_fabric_in(uint64_t raw);
FabricOut unpack_fabric_out(uint64_t raw);
Mem1D unpack_mem1d(uint64_t raw);
Mem4D unpack_mem4d(uint64_t raw);
Circular unpack_circular(uint64_t raw);
XCircular unpack_xcircular(uint64_t raw);
X4D unpack_x4d(uint64_t raw);

// Write-back of progress into a raw descriptor (microthread suspend [0609], SA, circular
// pointers [0534]).
uint64_t with_length(uint64_t raw, uint32_t length);     // fabric, 1D and circular
uint64_t with_base(uint64_t raw, uint32_t base);         // 1D and circular
uint64_t with_fw(uint64_t raw, bool fw);                 // circular

// The dimensions of a 4D vector: Length 2161 split into nibble groups by DF 2243 [0547].
// DF bit i set ends a dimension after nibble i; a dimension's length is its field value.
struct Dims4 {
  int n = 1;
  std::array<uint32_t, 4> len{};
};
// Returns false (and leaves `out` undefined) when DF asks for more than four dimensions.
bool split_dims(uint32_t length24, uint8_t df, Dims4& out);

// SIMD width of an SW code [0502]; 0 for the invalid code 3.
inline int simd_width(uint8_t sw_code) { return isa::kSimdWidth[sw_code & 3]; }

}  // namespace wafersim::pe
