// The tensor unit of seed 002 (Fig. 1): matrix array + vector engine + post-processor under a
// control unit that sequences them [0019], [0032], [0072]. One run_layer() call streams a
// whole product through the array, runs the loaded vector program once per group of drained
// rows (the control unit re-issues it), routes the engine's output rows to the
// post-processor and writes the pooled map to memory. Synchronisation is through the input
// queue [0032]: the array waits for room in it, the engine for dequeue-ready [0037].
//
// This class is the interface a processing element drives from C++: configure it, load a
// vector program, hand it spans of PE memory as operands and destination, read the counters.
// It knows nothing of Python.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "wafersim/tensor/matrix_array.hpp"
#include "wafersim/tensor/matrix_pass.hpp"
#include "wafersim/tensor/post_processor.hpp"
#include "wafersim/tensor/vector_engine.hpp"
#include "wafersim/tensor/vector_isa.hpp"

namespace wafersim::tensor {

struct TensorUnitConfig {
  MatrixArrayConfig array;        // array.lanes is the engine's lane count
  int input_queue_rows = 4;       // engine input buffer, in rows [0054]
  int sram_bytes = 64 * 1024;     // engine scratch SRAM
  PipelineMode pipeline = PipelineMode::stagger;
  ExecMode exec = ExecMode::fast;
};

// Counters of one layer, or cumulated over layers.
struct TensorCounters {
  int64_t cycles = 0;               // first array cycle to last post-processor write
  int64_t array_cycles = 0;
  int64_t macs = 0;
  int64_t peak_macs = 0;            // cycles x rows x cols
  int64_t tiles = 0;
  int64_t rows_drained = 0;         // channel transfers into the engine
  int64_t bundles = 0;              // vector instructions retired
  int64_t ppu_write_cycles = 0;
  // Stalls by cause.
  int64_t stall_array_drain_busy = 0;  // finished tile waits: previous drain still shifting
  int64_t stall_array_queue_full = 0;  // transfer waits: engine input queue full
  int64_t stall_engine_dequeue = 0;    // engine issue waits: dequeue-ready low
  int64_t stall_engine_sram_port = 0;  // engine issue waits: SRAM port busy
  double utilization() const {
    return peak_macs > 0 ? static_cast<double>(macs) / static_cast<double>(peak_macs) : 0.0;
  }
  void add(const TensorCounters& o);
};

class TensorUnit {
 public:
  explicit TensorUnit(const TensorUnitConfig& cfg);

  const TensorUnitConfig& config() const { return cfg_; }
  MatrixArray& array() { return array_; }
  VectorEngine& vector_engine() { return engine_; }
  PostProcessor& post_processor() { return ppu_; }
  void set_exec_mode(ExecMode m) { cfg_.exec = m; }

  // Decodes the vector program (ProgramError names the bundle and field) and keeps it.
  void load_vector_program(std::span<const Bundle> bundles);
  const std::vector<DecodedBundle>& vector_program() const { return program_; }

  // One layer: C = data @ weights (+ bias) through the array, the vector program per drained
  // row (it must dequeue >= 1 row and send exactly one OUT.B row per dequeued row), then
  // max pooling over pool.height x pool.width = positions, written to dst as
  // channels x Hp x Wp bytes. Returns this layer's counters (also added to counters()).
  TensorCounters run_layer(const MatmulOperands& ops, const PoolConfig& pool, std::span<uint8_t> dst);

  // The array alone: dst receives positions x channels 32-bit result patterns.
  TensorCounters run_matmul(const MatmulOperands& ops, std::span<uint32_t> dst);

  const TensorCounters& counters() const { return total_; }
  void reset_counters() { total_ = {}; }

 private:
  TensorUnitConfig cfg_;
  MatrixArray array_;
  VectorEngine engine_;
  PostProcessor ppu_;
  std::vector<DecodedBundle> program_;
  TensorCounters total_;
};

}  // namespace wafersim::tensor
