// Parameters of one compute element (seed 000 FIG. 8). Defaults mirror
// python/wafersim/defaults.py; docs/compute_element.md explains each.
#pragma once

#include <cstdint>
#include <string>

#include "wafersim/tensor/tensor_unit.hpp"

namespace wafersim::pe {

// How the picker chooses among ready queues and activated ids [0375], [0466].
enum class PickerPolicy : uint8_t {
  round_robin,     // cycle through every candidate before picking the same one again
  pick_from_last,  // keep picking the same ready queue until a closeout wavelet is picked
};

struct CeConfig {
  uint32_t memory_bytes = 48 * 1024;  // Memory 854 [0700]
  uint32_t code_bytes = 16 * 1024;    // the top part holds instructions [0700]
  int fabric_colors = 24;             // ids at or above are local colors [0096]
  int input_queue_depth = 6;          // per id [0329]; stall toward the router above depth-2
  int output_queue_depth = 6;         // per fabric color [0360]
  int microthreads = 8;               // UT State entries [0362]
  int task_start_latency = 2;         // cycles from the pick to the first instruction issue
  PickerPolicy picker = PickerPolicy::round_robin;
  int rng_resources = 4;              // LFSRs [0671], [0682]
  uint64_t rng_seed = 0;
  int row = 0, col = 0;               // position on the wafer, for messages
  bool trace = false;                 // record task spans for a Chrome/Perfetto trace
  bool profile = false;               // count busy cycles per instruction address
  // The literal reading of [0390]: a blocked id's microthreads do not resume. Off by
  // default: blocking gates only what the picker starts (docs/compute_element.md).
  bool block_holds_microthreads = false;
  // Bulk vector execution: a vector operation over memory and registers alone computes
  // its elements in one loop instead of cycle by cycle, with the same results, cycles and
  // statistics (docs/compute_element.md). Off: always element by element.
  bool bulk_vector = true;
  // An attached tensor unit (seed 002), created on the first tensor instruction.
  bool tensor_unit = false;
  tensor::TensorUnitConfig tensor;

  uint32_t data_bytes() const { return memory_bytes - code_bytes; }
  // 20-bit instructions are packed three to a 64-bit word [0348].
  uint32_t max_instructions() const { return code_bytes / 8 * 3; }
};

// Throws ConfigError naming the offending field.
void validate(const CeConfig& cfg);

// "PE(r,c)" for messages.
std::string pe_name(const CeConfig& cfg);

}  // namespace wafersim::pe
