// Bulk vector execution (docs/compute_element.md, "Bulk vector execution"): a vector
// operation whose operands are all memory, registers or immediates runs one iteration
// per cycle that nothing else on the CE can see or disturb while no microthread and no
// tensor pass is in flight. The CE then only counts those cycles and does their work
// later, in one loop, when something could look (the operation's last iteration, or a
// host call). The work is the same iterations in the same order, so memory, registers
// and random numbers come out exactly as element by element.
#pragma once

#include <cstdint>

#include "wafersim/pe/ce_core.hpp"
#include "wafersim/pe/vector_op.hpp"

namespace wafersim::pe {

// True when the remaining elements of `op` may be computed later: a vector or comparison
// instruction with no fabric, circular-buffer or FIFO operand, every memory element it
// has left inside data memory and even (so no iteration can fail), and no register
// destination that the operation itself reads as an address, index or scalar (GPR2-4,
// GPR6), so its addresses and scalar stay what they are now.
bool bulk_eligible(const CeCore& core, const VectorOp& op);

// Runs `iterations` full-width iterations of `op`, exactly as iterate() would (without
// their statistics, which the CE counted cycle by cycle).
void bulk_iterations(CeCore& core, VectorOp& op, uint64_t iterations);

}  // namespace wafersim::pe
