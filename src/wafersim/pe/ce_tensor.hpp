// A tensor unit attached to a compute element (seed 002 on a PE of seed 000): the unit,
// the settings the tensor instructions latch for the next pass, and the pass in flight.
//
// Timing model (docs/tensor.md, "On a processing element"): a pass issues in one cycle and
// runs asynchronously, like a microthread [0604]; the issuing task goes on. The unit reads
// its operands from PE memory at issue and takes the cycles seed 002's dataflow gives
// (TensorUnit counters); at the end of the last one the results land in PE memory, or
// start entering the output queue of the destination color, one wavelet per cycle while it
// has room. Then the unit activates the id `tdone` named, as a completed fabric vector
// activates its AC [0503]. A second pass waits for the first (stall `tensor_busy`).
#pragma once

#include <cstdint>
#include <vector>

#include "wafersim/tensor/tensor_unit.hpp"

namespace wafersim::pe {

struct TensorPass {
  const char* mnemonic = "";
  uint32_t pc = 0;
  uint64_t done_at = 0;          // the results land at the end of this cycle
  std::vector<uint32_t> values;  // results in destination order
  // Memory destination: one address per value, `bytes` bytes each.
  std::vector<uint32_t> addr;
  int bytes = 4;
  // Fabric destination: one wavelet per value.
  bool fabric = false;
  int color = 0;
  uint16_t index = 0;
  bool ctrl = false;
  size_t sent = 0;
  int done_id = -1;  // activated on completion; -1: none
};

struct CeTensor {
  explicit CeTensor(const tensor::TensorUnitConfig& cfg) : unit(cfg) {}
  tensor::TensorUnit unit;
  bool has_bias = false;        // tbias: a bias for the next pass
  std::vector<int32_t> bias;
  int done_id = -1;             // tdone: the id passes activate when they complete
  bool program_loaded = false;  // tvprog ran
  bool busy = false;            // a pass is in flight
  TensorPass pass;
};

}  // namespace wafersim::pe
