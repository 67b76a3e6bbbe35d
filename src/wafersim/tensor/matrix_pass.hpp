// One pass of the matrix array over a whole product C = A @ B (A: positions x depth data,
// B: depth x channels weights), split into output-stationary tiles of cols positions x rows
// channels. The dataflow, shared by both execution modes:
//  * tile k streams its depth K (+ bias cycles [0130]) one data/weight vector per cycle;
//  * it is captured into the shadows in the cycle after its last MAC, or later while the
//    previous tile is still draining; the next tile's first MAC (with clear) runs in the
//    capture cycle itself (double buffering [0123], [0129]);
//  * from the cycle after its capture, its rows leave one channel transfer per cycle (a row
//    of v valid positions needs ceil(v / lanes) transfers [0030]); only the tile's valid
//    rows are drained; a transfer waits for room in the consumer (DrainSink).
// The fast mode computes tile values with blocked kernels and transfer cycles with the
// recurrence above; the cycle mode clocks every unit (MatrixArray::step) under the same
// policy. Both give the same values and cycles (tests/test_matrix_array.py).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "wafersim/tensor/matrix_array.hpp"

namespace wafersim::tensor {

struct MatmulOperands {
  int64_t positions = 0;  // P
  int64_t depth = 0;      // K
  int64_t channels = 0;   // O
  // int8 mode: P x K data bytes and K x O weight bytes (row-major).
  std::span<const uint8_t> data8, weights8;
  // fp16 / bf16 mode: the same shapes as 16-bit patterns.
  std::span<const uint16_t> data16, weights16;
  // Optional per-channel int32 bias, fed as weights against a constant-1 data operand [0130].
  std::span<const int32_t> bias;
};

// One channel transfer leaving the array: `lanes` values of output channel `channel` for
// positions [pos0, pos0 + valid); lanes beyond `valid` carry the array's unused columns.
struct DrainedEntry {
  int64_t index;    // 0-based over the pass
  int64_t channel;
  int64_t pos0;
  int valid;
  std::span<const uint32_t> values;
};

class DrainSink {
 public:
  virtual ~DrainSink() = default;
  // Earliest cycle at which entry `index` may be transferred (room in the consumer).
  virtual int64_t earliest(int64_t index) = 0;
  virtual void accept(const DrainedEntry& e, int64_t cycle) = 0;
};

struct ArrayPassStats {
  int64_t cycles = 0;           // last array cycle + 1
  int64_t tiles = 0;
  int64_t mac_cycles = 0;       // cycles with enable
  int64_t macs = 0;             // useful multiply-accumulates (valid units x MAC cycles)
  int64_t bias_cycles = 0;      // per tile
  int64_t entries = 0;          // channel transfers
  int64_t stall_drain_busy = 0; // cycles finished tiles waited for the previous drain
  int64_t stall_consumer = 0;   // cycles transfers waited for room in the consumer
};

enum class ExecMode : uint8_t { fast, cycle };

// Number of constant-1 cycles that feed `bias` through weights of the array's range.
int64_t bias_cycles(const MatrixArrayConfig& cfg, std::span<const int32_t> bias);

// Runs the pass; entries go to the sink in order. Throws ConfigError on bad operands.
ArrayPassStats run_matmul_pass(MatrixArray& array, const MatmulOperands& ops, DrainSink& sink,
                               ExecMode mode);

// A sink that gathers the result into a positions x channels matrix of 32-bit patterns and
// never applies backpressure.
class MatrixSink : public DrainSink {
 public:
  MatrixSink(int64_t positions, int64_t channels);
  int64_t earliest(int64_t) override { return 0; }
  void accept(const DrainedEntry& e, int64_t cycle) override;
  std::vector<uint32_t>& result() { return out_; }
  int64_t last_cycle() const { return last_; }

 private:
  int64_t positions_, channels_;
  std::vector<uint32_t> out_;
  int64_t last_ = -1;
};

}  // namespace wafersim::tensor
