// A vector operation in flight [0552]-[0569]: its operands, its progress, and one
// iteration at a time (up to SIMD-width elements [0502], [0555]). The same object runs in
// the foreground or, once suspended, as a microthread in a UT State entry [0604]-[0610].
#pragma once

#include <array>
#include <cstdint>

#include "wafersim/pe/ce_core.hpp"
#include "wafersim/pe/isa.hpp"
#include "wafersim/pe/operand.hpp"

namespace wafersim::pe {

struct VectorOp {
  Instruction in;
  uint32_t pc = 0;
  uint64_t issued = 0;     // cycle of issue (for the trace)
  int owner = 0;           // id of the task that issued it: blocking it stops resumption [0390]
  int task_color = 0;      // the issuing task's color (a fabric input's default queue)
  // The operands were resolved without error for `in` at `pc` (issue_vector_op reuses them
  // when the same instruction issues again with the same descriptors).
  bool resolved = false;
  Operand src0, src1, dst;
  uint32_t total = 1;      // elements to process
  uint32_t done = 0;       // elements processed
  int width = 1;           // elements per iteration at most
  bool flag = true;        // comparisons: every element so far satisfied it
  bool microthreaded = false;  // a fabric operand enables microthreading (UE) [0500]
  int ut_entry = -1;           // the UT State entry it would occupy [0362]
  bool colorset = false;   // block / unblock / activate over a vector of ids
  bool terminated = false; // ended by a control wavelet with Term [0504]
  bool always_ready = false;  // no fabric or circular operand: no iteration ever stalls
  bool bulk_checked = false;  // bulk execution was considered (bulk_vector.hpp)
  // Once suspended, the operation works on its own copy of the register file, taken when
  // it suspended (part of its UT State [0609], [0610]): its register sources, the fmac
  // scalar (GPR2/3) and the index register (GPR4, for WLI and written by US / CX) come
  // from the copy, so tasks that run meanwhile and the operation cannot disturb each other.
  // Only a register destination is written back to the register file.
  std::array<uint16_t, isa::kGprs> regs{};

  const char* mnemonic() const { return in.mnemonic(); }
  // Back to the defaults above, except `regs` (written at suspension before any read):
  // cheaper on every issue than assigning a whole new VectorOp.
  void reset() {
    resolved = false;
    src0 = Operand{};
    src1 = Operand{};
    dst = Operand{};
    total = 1;
    done = 0;
    width = 1;
    flag = true;
    microthreaded = false;
    ut_entry = -1;
    colorset = false;
    terminated = false;
    always_ready = false;
    bulk_checked = false;
  }
  // The same operation issued again: its resolved operands stay, its progress (and what
  // a suspension wrote back) starts over.
  void restart() {
    done = 0;
    flag = true;
    terminated = false;
    bulk_checked = false;
    for (Operand* o : {&src0, &src1, &dst}) {
      o->written = false;
      o->written_raw = 0;
    }
  }
};

// What one iteration can do now.
struct Probe {
  int lanes = 0;            // elements it can process
  bool term = false;        // a Term control wavelet heads a fabric input: end now [0504]
  StallCause cause = StallCause::none;
  int color = -1;           // the queue or color the stall waits on
  const char* operand = ""; // which operand stalls
};

// Reads the operands of a vector or comparison instruction (or of block / unblock /
// activate with a vector source) at issue; throws ProgramError on illegal combinations.
void issue_vector_op(VectorOp& op, const CeCore& core, const Instruction& in, uint32_t pc,
                     int owner, int task_color);

Probe probe(const CeCore& core, const VectorOp& op);

// Runs one iteration that `p` (from probe, with lanes > 0 or term) allows. Returns true
// when the operation has completed (all elements, or Term).
bool iterate(CeCore& core, VectorOp& op, const Probe& p);

// The work of one iteration over `lanes` elements, without its statistics: reads the
// sources, computes, writes the destination and advances `done` (iterate's body).
void process_lanes(CeCore& core, VectorOp& op, int lanes);

// Completion side effects: activations (AC [0503]), SA write-back, the comparison flag,
// and restoring descriptors a suspension rewrote.
void complete(CeCore& core, VectorOp& op);

// [0609]: on suspension, write the progress back into the descriptors (remaining Length,
// advanced Base of 1D vectors).
void write_back_progress(CeCore& core, VectorOp& op);

// One line naming the stall for reports: "input queue of color 3 is empty (src1)".
std::string describe_stall(const Probe& p);

}  // namespace wafersim::pe
