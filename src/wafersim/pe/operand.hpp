// The operands of a vector operation as D-Seq 844 sees them [0356], [0563]-[0578]:
// registers, immediates, memory vectors (1D, 4D, circular buffer / FIFO) and fabric
// vectors, with their address generators and the element-availability checks that decide
// stalls [0564], [0568], [0608].
#pragma once

#include <array>
#include <cstdint>

#include "wafersim/pe/ce_core.hpp"
#include "wafersim/pe/ce_stats.hpp"
#include "wafersim/pe/dsd.hpp"
#include "wafersim/pe/isa_tables.hpp"

namespace wafersim::pe {

enum class OpndKind : uint8_t {
  none,
  gpr,         // a register (a pair for 32-bit elements)
  imm,         // an immediate constant or a pseudo-random number [0593]
  mem_gpr6,    // memory at the address in GPR6 [0591]
  mem_abs,     // memory at an 8-bit address [0599]
  mem1d,       // FIG. 21C
  mem4d,       // FIG. 21D + 22B
  circular,    // FIG. 21E + 22A (a FIFO when the XDSD says so)
  fabric_in,   // FIG. 21A
  fabric_out,  // FIG. 21B
};
const char* operand_kind_name(OpndKind k);

enum class Role : uint8_t { source, dest };

// Where an error message says we are.
struct IssueCtx {
  uint32_t pc;
  const char* mnemonic;
  const char* operand;  // "src0", "src1" or "dst"
};

struct Operand {
  OpndKind kind = OpndKind::none;
  Role role = Role::source;
  isa::Elem elem = isa::Elem::none;
  uint8_t bytes = 2;
  uint8_t reg = 0;           // GPR number, or DSR number for descriptor operands
  DsrSet set = DsrSet::s0;   // DSR set of a descriptor operand
  uint64_t issue_raw = 0;    // the descriptor as it was at issue
  uint64_t written_raw = 0;  // what the last microthread suspension wrote back [0609]
  bool written = false;
  uint32_t length = 0;       // elements of a vector operand
  int sw = 0;                // SIMD width set by SW (fabric, circular); 0 otherwise
  // memory vectors
  uint32_t base = 0;
  int32_t stride = 0;        // bytes
  bool wli = false, sa = false;
  // an indexed 1D vector (IX, wafersim's extension): element k lies at Base + the u16 at
  // ix_list + k Stride (+ GPR4 under WLI); ix_list is SR[IX] read at issue. 0 = none.
  uint8_t ix = 0;
  uint32_t ix_list = 0;
  Dims4 dims;
  std::array<int32_t, 4> dim_stride{};
  // circular buffers: the live pointer (Base, FW) stays in the DSR [0534], [0542]
  uint32_t start = 0, end = 0;
  bool fifo = false, push_en = false, pop_en = false;
  uint8_t push_color = 0, pop_color = 0;
  // fabric vectors
  int queue = -1;            // the input queue read, or the output color written
  uint8_t ac = 0, utid = 0, index6 = 0;
  isa::Completion ca = isa::Completion::activate;  // what completion does to AC [0503]
  bool ue = false, term = false, cx = false, us = false, ctrl = false;
  // scalar sources
  uint32_t value = 0;        // immediate
  bool prn = false;
  uint32_t addr = 0;         // mem_abs

  bool is_vector() const { return kind >= OpndKind::mem1d; }
  bool is_fabric() const { return kind == OpndKind::fabric_in || kind == OpndKind::fabric_out; }
  // Elements carried by one wavelet: one sparse element, two dense 16-bit elements, or
  // one 32-bit element [0502], [0449]-[0450].
  int per_wavelet() const { return (bytes == 4 || sw == 1) ? 1 : 2; }
};

Operand gpr_operand(const CeCore& core, const IssueCtx& at, int reg, isa::Elem elem, Role role);
Operand imm_operand(const CeCore& core, const IssueCtx& at, int code, isa::Elem elem);
// The value of immediate `code` (not the LFSR draw, isa::kImmPrn) as an element of `elem`.
uint32_t imm_value(int code, isa::Elem elem);
Operand mem_gpr6_operand(isa::Elem elem);
Operand mem_abs_operand(uint32_t addr, isa::Elem elem);
// A descriptor operand read from DSR `set`[n] at issue; `task_color` is the queue a
// fabric input reads by default [0510], [0563].
Operand dsr_operand(const CeCore& core, const IssueCtx& at, DsrSet set, int n, isa::Elem elem,
                    Role role, int task_color);

// How many of `want` elements the operand can take or give this cycle, and if none, why.
int available(const CeCore& core, const Operand& o, int want, StallCause& cause);

// Reads `lanes` elements, element index `first` onwards, into out[0..lanes).
void read_lanes(CeCore& core, const IssueCtx& at, Operand& o, uint32_t first, int lanes,
                uint32_t* out);
// Writes `lanes` elements, element index `first` onwards.
void write_lanes(CeCore& core, const IssueCtx& at, Operand& o, uint32_t first, int lanes,
                 const uint32_t* in);

// The queue color a fabric input's head is checked against for Term [0504]: true when the
// head wavelet is a control wavelet and Term is set.
bool term_pending(const CeCore& core, const Operand& o);

}  // namespace wafersim::pe
